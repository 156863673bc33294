"""The simulation: emission, forces, colliders, sub-emitters, trails, the CSG cloud, the timeline."""
