/* Depth-only pre-pass of the scene's opaque meshes from the particle camera:
 * the splat and the rasterized particles are hidden behind what this draws. */

#ifdef GPU_VERTEX_SHADER
void main()
{
  gl_Position = view_proj * (model * vec4(position, 1.0));
}
#endif

#ifdef GPU_FRAGMENT_SHADER
void main()
{
}
#endif
