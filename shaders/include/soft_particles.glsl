/* Soft particles (addon/engine/draw/soft_particles.py): a sprite fades over the
 * last soft_distance before the scene's depth.  soft_depth maps a window
 * depth to its distance along the camera axis over soft_distance (plus a
 * constant the difference drops). */

float soft_view(float window_depth)
{
  vec2 affine = vec2(window_depth, 1.0);
  return dot(soft_numerator, affine) / dot(soft_denominator, affine);
}

/* How much of a sprite at window depth `sprite` shows in front of the scene at window depth `scene`. */
float soft_fade(float sprite, float scene)
{
  return clamp(soft_view(scene) - soft_view(sprite), 0.0, 1.0);
}
