/* Whether a particle is alive: born (age >= 0), not yet dead (age < life; life <= 0 never lived), finite.  NaN
 * fails every comparison, so it is culled too.  The one test the splat, the sorts, compaction and the neighbour
 * grid share (reference/seam/state.py). */
bool particle_alive(Particle particle)
{
  return particle.age >= 0.0 && particle.age < particle.life && is_finite(particle.position);
}
