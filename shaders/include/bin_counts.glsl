/* Adding to the binning's per-bin counts (bin_count.glsl, bin_count_hashed.glsl): the R32UI image
 * `counts`, bin i at particle_texel(i). */

void add_global(uint bin, uint amount)
{
  imageAtomicAdd(counts, particle_texel(int(bin), imageSize(counts).x), amount);
}
