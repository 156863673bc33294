/* A soft round sprite in premultiplied alpha: a Gaussian falloff that reaches
 * zero at the quad's rim, blended with "over" (ONE, ONE_MINUS_SRC_ALPHA). */

const float FALLOFF = 4.0;

void main()
{
  float rim = exp(-FALLOFF);
  float soft = max(0.0, (exp(-FALLOFF * dot(v_corner, v_corner)) - rim) / (1.0 - rim));
  float alpha = v_color.a * soft;
  out_color = vec4(v_color.rgb * alpha, alpha);
}
