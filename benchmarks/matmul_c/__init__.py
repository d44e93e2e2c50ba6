"""The matmul_c example: a C program tuned through the command backend (space.json, matmul.c)."""
