"""Numpy reference of every kernel: the same algorithm in the same float32 order.

Tests diff the GPU kernels against these: integer results (packing, carry,
overflow counts) exactly, float results within a tight tolerance.  Arrays are
(count, 4) float32 in the layout ``simulation.py`` documents.
"""
