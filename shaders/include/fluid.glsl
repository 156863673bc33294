/* Position Based Fluids' shared pieces (fluids.py; reference/simulate/fluids.py): the SPH kernels
 * and (FLUID_SOLVER: the iterations) the colliders as walls of fluid at rest, with the Collider record and
 * sdf_sample.glsl. */

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

#ifdef FLUID_SOLVER /* the iterations: colliders and walls */
/* World signed distance from a collider's surface and the outward normal there: its shape's in local space,
 * carried to the world by the inverse transpose (exact for rotations and uniform scales).  A plane counts over
 * its extent only; false for colliders fluid does not lean on (permeable, killing) and planes passed by. */
bool collider_surface(Collider collider, vec3 position, out float distance, out vec3 normal)
{
  vec4 to_local[3] = collider.to_local;
  vec4 at = vec4(position, 1.0);
  vec3 p = vec3(dot(to_local[0], at), dot(to_local[1], at), dot(to_local[2], at));
  vec3 half_size = collider.half_size;
  vec3 local = vec3(0.0, 0.0, 1.0);
  float d = 0.0;
  if (collider.permeability > 0.0 || collider.kill > 0.0) {
    return false;
  }
  switch (int(collider.kind)) {
  case COLLIDER_PLANE:
    if (abs(p.x) > half_size.x || abs(p.y) > half_size.y) {
      return false;
    }
    d = p.z;
    break;
  case COLLIDER_SPHERE: {
    float r = length(p);
    local = r > 0.0 ? p / r : local;
    d = r - half_size.x;
    break;
  }
  case COLLIDER_BOX: {
    vec3 q = abs(p) - half_size;
    int axis = q.x >= q.y && q.x >= q.z ? 0 : (q.y >= q.z ? 1 : 2);
    vec3 out_part = max(q, vec3(0.0));
    float out_length = length(out_part);
    if (out_length > 0.0) {
      local = out_part * sign(p) / out_length;
      d = out_length;
    } else {
      local = vec3(0.0);
      local[axis] = p[axis] < 0.0 ? -1.0 : 1.0;
      d = q[axis];
    }
    break;
  }
  case COLLIDER_SDF: {
    vec3 gradient;
    d = sdf_sample(collider, p, gradient);
    local = sdf_normal(gradient);
    break;
  }
  }
  vec3 world = to_local[0].xyz * local.x + to_local[1].xyz * local.y + to_local[2].xyz * local.z;
  float stretch = length(world);
  if (!(stretch > 0.0)) {
    return false;
  }
  normal = world / stretch;
  distance = d * stretch - collider.thickness; /* a particle rests at the thickness */
  return true;
}

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
