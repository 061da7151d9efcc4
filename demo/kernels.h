/* kernels.h - the demo's kernels (libkernels.so). */
#ifndef DEMO_KERNELS_H
#define DEMO_KERNELS_H
#include <stddef.h>
void matmul(const float *a, const float *b, float *c, int n, int k, int m);
void softmax(float *x, int n, int m);
void layernorm(float *x, int n, int m);
void gelu(float *x, size_t n);
#endif
