/* Stateless randomness keyed by (particle index, simulation step, stream).
 *
 * Sylvan's thesis (see README) sampled a random texture at (particle index + per-frame offset).
 * A hash gives the same per-particle, per-frame independence without a texture
 * fetch, without the texture's period, and identically on every host and in
 * the numpy reference, which is what makes bakes reproducible bit for bit.
 * PCG hash: Jarcho & Olano, "Hash Functions for GPU Rendering", JCGT 2020. */

uint pcg_hash(uint v)
{
  uint state = v * 747796405u + 2891336453u;
  uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

/* Uniform float in [0, 1) with 24 random bits (exact in float32). */
float random_unit(uint index, uint step, uint stream)
{
  uint h = pcg_hash(index ^ pcg_hash(step ^ pcg_hash(stream)));
  return float(h >> 8u) * (1.0 / 16777216.0);
}

/* Uniform direction on the unit sphere from two uniforms. */
vec3 random_direction(float u, float v)
{
  float z = 2.0 * u - 1.0;
  float r = sqrt(max(0.0, 1.0 - z * z));
  float phi = 6.28318530718 * v;
  return vec3(r * cos(phi), r * sin(phi), z);
}
