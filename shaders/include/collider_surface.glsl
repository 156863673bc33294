/* A collider's surface seen from a point (fluid.glsl's walls, flocking's avoidance): needs the Collider record,
 * collider_count and sdf_sample.glsl; the numpy reference is reference/simulate/fluids.collider_surfaces. */

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
  distance = d / stretch - collider.thickness; /* a particle rests at the thickness */
  return true;
}
