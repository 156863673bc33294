/* PBF's end of the iterations (fluids.py), a thread a slot: each live particle's velocity, its own plus the
 * solver's move over the step, to fluid_velocity (w 1; 0 for other slots), and its last iterate into the state
 * (age kept). */

void main()
{
  int index;
  ivec2 texel;
  if (!particle_slot(imageSize(pos_age).x, count, index, texel)) {
    return;
  }
  vec4 pos_age_now = imageLoad(pos_age, texel);
  vec4 vel_life_now = imageLoad(vel_life, texel);
  if (!(pos_age_now.w >= 0.0 && pos_age_now.w < vel_life_now.w && is_finite(pos_age_now.xyz))) { /* the grid's test */
    imageStore(fluid_velocity, texel, vec4(0.0));
    return;
  }
  vec3 p = imageLoad(fluid_in, texel).xyz;
  imageStore(fluid_velocity, texel, vec4(vel_life_now.xyz + (p - pos_age_now.xyz) * fluid_inverse_dt, 1.0));
  imageStore(pos_age, texel, vec4(p, pos_age_now.w));
}
