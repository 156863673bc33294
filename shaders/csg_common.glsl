/* CSG primitives, one per column of the `primitives` image, in stack order:
 *   row 0: center.xyz, w: shape + 2 * mode (shape 0 sphere, 1 box; mode 0 add, 1 subtract)
 *   row 1: size.xyz (x: sphere radius; box: half extents)
 *   row 2: color.rgb
 * Samples: `*_pos` holds position.xyz and w = primitive index; `*_attr` holds
 * the outward normal of the resulting solid and w = color as 8-bit r | g << 8 | b << 16
 * (an exact float). */

const float SHAPE_BOX = 1.0;

bool primitive_subtracts(int k)
{
  return imageLoad(primitives, ivec2(k, 0)).w >= 2.0;
}

/* Strictly inside primitive k (its own surface is not inside). */
bool inside_primitive(int k, vec3 p)
{
  vec4 center_code = imageLoad(primitives, ivec2(k, 0));
  vec3 size = imageLoad(primitives, ivec2(k, 1)).xyz;
  vec3 d = p - center_code.xyz;
  if (mod(center_code.w, 2.0) == SHAPE_BOX) {
    return all(lessThan(abs(d), size));
  }
  precise float distance_squared = (d.x * d.x + d.y * d.y) + d.z * d.z; /* unfused, as in the reference */
  precise float radius_squared = size.x * size.x;
  return distance_squared < radius_squared;
}

/* Inside the solid built by primitives [0, last) applied in order. */
bool inside_stack(int last, vec3 p)
{
  bool inside = false;
  for (int k = 0; k < last; k++) {
    if (inside_primitive(k, p)) {
      inside = !primitive_subtracts(k);
    }
  }
  return inside;
}

/* Inside any primitive of [first, last). */
bool inside_any(int first, int last, vec3 p)
{
  for (int k = first; k < last; k++) {
    if (inside_primitive(k, p)) {
      return true;
    }
  }
  return false;
}
