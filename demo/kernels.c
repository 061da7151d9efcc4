/* kernels.c - the numeric kernels of the demo model, built as libkernels.so. */
#include <math.h>
#include <stddef.h>

#include "kernels.h"

#define NI __attribute__((noinline))

/* One row of a times one column of b: inlined into matmul, where pfsym
 * shows it as a frame of its own (matmul;dot_[i] in pffold's output). */
static inline float dot(const float *row, const float *col, int k, int stride)
{
	float s = 0;
	for (int p = 0; p < k; p++)
		s += row[p] * col[p * stride];
	return s;
}

NI void matmul(const float *a, const float *b, float *c, int n, int k, int m)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			c[i * m + j] = dot(a + i * k, b + j, k, m);
}

NI void softmax(float *x, int n, int m)
{
	for (int i = 0; i < n; i++) {
		float mx = x[i * m], sum = 0;
		for (int j = 1; j < m; j++)
			mx = x[i * m + j] > mx ? x[i * m + j] : mx;
		for (int j = 0; j < m; j++)
			sum += x[i * m + j] = expf(x[i * m + j] - mx);
		for (int j = 0; j < m; j++)
			x[i * m + j] /= sum;
	}
}

NI void layernorm(float *x, int n, int m)
{
	for (int i = 0; i < n; i++) {
		float mean = 0, var = 0;
		for (int j = 0; j < m; j++)
			mean += x[i * m + j];
		mean /= (float)m;
		for (int j = 0; j < m; j++)
			var += (x[i * m + j] - mean) * (x[i * m + j] - mean);
		float inv = 1.0f / sqrtf(var / (float)m + 1e-5f);
		for (int j = 0; j < m; j++)
			x[i * m + j] = (x[i * m + j] - mean) * inv;
	}
}

#ifndef MODEL_V2
/* v1: the tanh approximation of GELU. */
NI void gelu(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}
#else
/* v2 (the regression pfdiff finds in `make demo`): the exact GELU with erf in
 * extended precision, plus its derivative kept for a backward pass that
 * inference never runs. */
static long double gelu_grad[1 << 16];
NI void gelu(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		long double v = x[i], cdf = 0.5L * (1.0L + erfl(v * 0.70710678118654752L));
		gelu_grad[i & 0xffff] = cdf + v * expl(-0.5L * v * v) * 0.39894228040143268L;
		x[i] = (float)(v * cdf);
	}
}
#endif
