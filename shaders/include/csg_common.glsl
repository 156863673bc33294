/* CSG primitives, one per column of the `primitives` image, in stack order: a
 * CsgPrimitive record each (records.CSG_PRIMITIVE: center, code = shape +
 * CSG_SHAPE_COUNT * mode (tables.CSG_SHAPES, CSG_MODES), size, color).
 * Samples: `*_pos` holds position.xyz and w = primitive index; `*_attr` holds
 * the outward normal of the resulting solid and w = color as 8-bit r | g << 8 | b << 16
 * (an exact float). */

bool primitive_subtracts(CsgPrimitive primitive)
{
  return int(primitive.code) / CSG_SHAPE_COUNT == CSG_MODE_SUBTRACT;
}

bool primitive_is_box(CsgPrimitive primitive)
{
  return int(primitive.code) % CSG_SHAPE_COUNT == CSG_SHAPE_BOX;
}

/* Strictly inside primitive k (its own surface is not inside). */
bool inside_primitive(int k, vec3 p)
{
  CsgPrimitive primitive = load_csg_primitive(k);
  vec3 size = primitive.size;
  vec3 d = p - primitive.center;
  if (primitive_is_box(primitive)) {
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
      inside = !primitive_subtracts(load_csg_primitive(k));
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
