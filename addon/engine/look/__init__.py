"""What a particle looks like: look tables, lit and tinted kernel variants, sprite images."""
