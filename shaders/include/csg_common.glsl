/* CSG primitives, one per column of the `primitives` image, in stack order:
 *   row 0: center.xyz, w: shape + CSG_SHAPE_COUNT * mode (tables.CSG_SHAPES, CSG_MODES)
 *   row 1: size.xyz (x: sphere radius; box: half extents)
 *   row 2: color.rgb
 * Samples: `*_pos` holds position.xyz and w = primitive index; `*_attr` holds
 * the outward normal of the resulting solid and w = color as 8-bit r | g << 8 | b << 16
 * (an exact float). */

bool primitive_subtracts(int k)
{
  return int(imageLoad(primitives, ivec2(k, 0)).w) / CSG_SHAPE_COUNT == CSG_MODE_SUBTRACT;
}

/* Strictly inside primitive k (its own surface is not inside). */
bool inside_primitive(int k, vec3 p)
{
  vec4 center_code = imageLoad(primitives, ivec2(k, 0));
  vec3 size = imageLoad(primitives, ivec2(k, 1)).xyz;
  vec3 d = p - center_code.xyz;
  if (int(center_code.w) % CSG_SHAPE_COUNT == CSG_SHAPE_BOX) {
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
