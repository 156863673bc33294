/* New surface samples for the primitives [first, last): samples_per_primitive
 * each, appended after the `count` samples already kept (read on the GPU). */

void main()
{
  int j = int(gl_GlobalInvocationID.y) * dispatch_width + int(gl_GlobalInvocationID.x);
  if (j >= (last - first) * samples_per_primitive) {
    return;
  }
  int k = first + j / samples_per_primitive;
  uint i = uint(j % samples_per_primitive);
  uint stream = uint(seed) * CSG_STREAM_PER_SEED;
  CsgPrimitive primitive = load_csg_primitive(k);
  vec3 size = primitive.size;
  float u = random_unit(i, uint(k), stream + CSG_STREAM_U);
  float v = random_unit(i, uint(k), stream + CSG_STREAM_V);
  vec3 normal;
  vec3 local;
  if (primitive_is_box(primitive)) {
    /* A face pair chosen by its area, a side, then a uniform point on the face. */
    vec3 area = vec3(size.y * size.z, size.x * size.z, size.x * size.y);
    precise float pick = random_unit(i, uint(k), stream + CSG_STREAM_PICK) * ((area.x + area.y) + area.z);
    precise float first_two = area.x + area.y;
    int axis = pick < area.x ? 0 : (pick < first_two ? 1 : 2);
    float side = random_unit(i, uint(k), stream + CSG_STREAM_SIDE) < 0.5 ? -1.0 : 1.0;
    vec3 face = vec3(u, v, 0.0) * 2.0 - 1.0;
    local = axis == 0 ? vec3(side, face.x, face.y) : (axis == 1 ? vec3(face.x, side, face.y) : vec3(face.x, face.y, side));
    normal = vec3(0.0);
    normal[axis] = side;
    local *= size;
  }
  else {
    normal = random_direction(u, v);
    local = normal * size.x;
  }
  if (primitive_subtracts(primitive)) {
    normal = -normal;  /* a carved wall faces into the removed volume */
  }
  precise vec3 rgb_rounded = clamp(primitive.color, 0.0, 1.0) * 255.0 + 0.5;
  uvec3 rgb = uvec3(rgb_rounded);
  int slot = int(imageLoad(sample_count, ivec2(0)).x) + j;
  ivec2 texel = particle_texel(slot, imageSize(sample_pos).x);
  imageStore(sample_pos, texel, vec4(primitive.center + local, float(k)));
  imageStore(sample_attr, texel, vec4(normal, float(rgb.r | (rgb.g << 8u) | (rgb.b << 16u))));
}
