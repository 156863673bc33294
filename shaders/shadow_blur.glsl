/* One axis of the Gaussian blur of every density sublevel (shadow_levels.glsl's
 * sublevel_blur, BLUR_TAPS voxels each side, weights normalised, clamped to
 * the sublevel's edge): dispatched along x from the fixed-point sums, then
 * along y and z over floats.  Separable, so the blur costs 3 x (2 BLUR_TAPS
 * + 1) loads a voxel where a 3D one would cost the cube of that.  Where the
 * blur is a Gaussian, a particle's density is one wherever it sits in its
 * voxel (the trilinear splat's shape changes with that; shadow_volume.py
 * says how much that costs). */

void main()
{
  ivec3 voxel = ivec3(gl_GlobalInvocationID);
  ivec3 stack = imageSize(blurred);
  if (any(greaterThanEqual(voxel, stack))) {
    return;
  }
  int resolution = stack.x;
  int sublevel = 0;
  int start = 0;
  while (voxel.z >= start + level_size(resolution, sublevel_level(sublevel))) {
    start += level_size(resolution, sublevel_level(sublevel));
    sublevel++;
  }
  int size = level_size(resolution, sublevel_level(sublevel));
  ivec3 local = voxel - ivec3(0, 0, start);
  if (any(greaterThanEqual(local, ivec3(size)))) {
    imageStore(blurred, voxel, vec4(0.0));
    return;
  }
  float deviation = sublevel_blur(sublevel);
  ivec3 along = ivec3(equal(ivec3(axis), ivec3(0, 1, 2)));
  float sum = 0.0;
  float total = 0.0;
  for (int tap = -BLUR_TAPS; tap <= BLUR_TAPS; tap++) {
    float weight = deviation > 0.0 ? exp(-0.5 * float(tap * tap) / (deviation * deviation)) : float(tap == 0);
    ivec3 at = clamp(local + along * tap, ivec3(0), ivec3(size - 1));
    sum += weight * float(imageLoad(blur_source, at + ivec3(0, 0, start)).x);
    total += weight;
  }
  imageStore(blurred, voxel, vec4(sum / total));
}
