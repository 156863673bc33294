/* Position Based Fluids' shared pieces (fluids.py; reference/simulate/fluids.py): the SPH kernels
 * and (FLUID_SOLVER: the iterations) the colliders as walls of fluid at rest, with collider_surface.glsl. */

float fluid_poly6(float r2)
{
  float x = max(fluid_radius * fluid_radius - r2, 0.0);
  return fluid_poly6_scale * x * x * x;
}

/* The spiky kernel's gradient at offset d = p_i - p_j of length r (0 at r = 0 and beyond the radius). */
vec3 fluid_spiky(vec3 d, float r)
{
  float x = max(fluid_radius - r, 0.0);
  return r > 0.0 ? d * (fluid_spiky_scale * x * x / r) : vec3(0.0);
}

/* An entry's texel `part` (0: velocity and |omega|, 1: omega) of fluid_flow, two texels an entry side by side,
 * from its `texel` in entry order. */
ivec2 fluid_flow_texel(ivec2 texel, int part)
{
  return ivec2(2 * texel.x + part, texel.y);
}

#ifdef FLUID_SOLVER /* the iterations: colliders and walls */
/* The density the colliders add at `position` as walls of fluid at rest and its gradient: each collider's share
 * of the kernel beyond its surface (the surface taken `fluid_size` beyond where particles rest, so a lattice layer
 * resting there is at rest), shares combined as 1 - prod(1 - share). */
float fluid_walls(vec3 position, out vec3 gradient)
{
  float open_share = 1.0;
  vec3 open_gradient = vec3(0.0);
  for (int c = 0; c < collider_count; c++) {
    float distance;
    vec3 normal;
    if (!collider_surface(load_collider(c), position, distance, normal)) {
      continue;
    }
    float q = clamp((distance + fluid_size) * (1.0 / fluid_radius), -1.0, 1.0);
    float q2 = q * q;
    float integral = q * (1.0 + q2 * (-4.0 / 3.0 + q2 * (6.0 / 5.0 + q2 * (-4.0 / 7.0 + q2 * (1.0 / 9.0)))));
    float share = 0.5 - (315.0 / 256.0) * integral;
    float x = 1.0 - q2;
    float slope = (-315.0 / 256.0) / fluid_radius * (x * x) * (x * x);
    open_gradient = open_gradient * (1.0 - share) - normal * (open_share * slope);
    open_share *= 1.0 - share;
  }
  gradient = open_gradient * -fluid_wall_density;
  return (1.0 - open_share) * fluid_wall_density;
}

/* Moves `position` out of every collider fluid leans on, onto its surface plus thickness. */
vec3 fluid_project(vec3 position)
{
  for (int c = 0; c < collider_count; c++) {
    float distance;
    vec3 normal;
    if (collider_surface(load_collider(c), position, distance, normal) && distance < 0.0) {
      position -= normal * distance;
    }
  }
  return position;
}

#endif
