/* A textured sprite's pose (sprite_sheets.py): its angle and its place in the
 * flipbook, from its slot, the seed and its age alone (no state).  Needs
 * random.glsl, look_seed and sprite_sheets.POSE_CONSTANTS (sheet_frames,
 * sheet_rate, sheet_random_start, rotation_angle, rotation_random, spin_speed,
 * spin_random, rotation_align).  Each draw has its own step of STREAM_SPRITE. */

float sprite_draw(int index, uint draw)
{
  return random_unit(uint(index), draw, uint(look_seed) * STREAM_PER_SEED + STREAM_SPRITE);
}

/* Pixels a second the point at `clip` moves with world `velocity`, from d(clip)/dt (no second point to project,
 * so nothing behind the camera); `size`: the target in pixels. */
vec2 screen_velocity(vec4 clip, vec3 velocity, vec2 size)
{
  vec4 rate = view_proj * vec4(velocity, 0.0);
  return (rate.xy * clip.w - clip.xy * rate.w) / (clip.w * clip.w) * 0.5 * size;
}

/* Radians counterclockwise on screen: the angle at birth (with its random part), the spin over the age (each
 * particle's speed lowered by up to spin_random of it), and with rotation_align the screen velocity's direction. */
float sprite_angle(int index, float age, vec2 velocity_px)
{
  precise float birth = rotation_angle + rotation_random * (2.0 * sprite_draw(index, SPRITE_DRAW_ANGLE) - 1.0);
  precise float spin = spin_speed * (1.0 - spin_random * sprite_draw(index, SPRITE_DRAW_SPIN));
  precise float angle = birth + spin * age;
  if (rotation_align != 0 && dot(velocity_px, velocity_px) > 0.0) {
    angle += atan(velocity_px.y, velocity_px.x);
  }
  return angle;
}

/* Where in the flipbook the particle is, in [0, sheet_frames): over its life from the first frame to the last
 * (sheet_rate < 0), or at sheet_rate frames a second, looping; started up to sheet_random_start of the sheet on
 * (whole frames).  The frame shown is its floor, blended into the next by its fraction (flipbook.glsl). */
float flipbook_position(int index, float age, float life)
{
  float frames = sheet_frames;
  float start = floor(sheet_random_start * sprite_draw(index, SPRITE_DRAW_FRAME) * frames);
  precise float played = sheet_rate < 0.0 ? clamp(age / life, 0.0, 1.0) * (frames - 1.0) : age * sheet_rate;
  precise float position = start + played;
  return position - frames * floor(position / frames);
}
