/*
 * model.c - a small "model inference" workload for `make demo`: a transformer
 * block (attention + MLP) run over batches, a worker thread preparing the
 * next batch, the kernels in libkernels.so. Usage: model [SECONDS]
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "kernels.h"

#define NI __attribute__((noinline))
#define T 64   /* tokens */
#define D 96   /* model width */
#define H 384  /* MLP width */

static float wq[D * D], wk[D * D], wv[D * D], w1[D * H], w2[H * D];
static volatile int stop;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill(float *p, size_t n, unsigned *seed)
{
	for (size_t i = 0; i < n; i++) {
		*seed = *seed * 1103515245u + 12345u;
		p[i] = (float)((*seed >> 16) & 0x7fff) / 32768.0f - 0.5f;
	}
}

NI static void attention(const float *x, float *out)
{
	static float q[T * D], k[T * D], v[T * D], kt[D * T], s[T * T];
	matmul(x, wq, q, T, D, D);
	matmul(x, wk, k, T, D, D);
	matmul(x, wv, v, T, D, D);
	for (int i = 0; i < T; i++)
		for (int j = 0; j < D; j++)
			kt[j * T + i] = k[i * D + j];
	matmul(q, kt, s, T, D, T);
	softmax(s, T, T);
	matmul(s, v, out, T, T, D);
}

NI static void mlp(const float *x, float *out)
{
	static float h[T * H];
	matmul(x, w1, h, T, D, H);
	gelu(h, T * H);
	matmul(h, w2, out, T, H, D);
}

NI static void transformer_block(float *x)
{
	static float a[T * D], m[T * D];
	layernorm(x, T, D);
	attention(x, a);
	for (int i = 0; i < T * D; i++)
		x[i] += a[i];
	layernorm(x, T, D);
	mlp(x, m);
	for (int i = 0; i < T * D; i++)
		x[i] += m[i];
}

NI static void run_model(float *x, int layers)
{
	for (int l = 0; l < layers; l++)
		transformer_block(x);
}

NI static void tokenize(float *batch, unsigned *seed)
{
	for (int r = 0; r < 4; r++)
		fill(batch, T * D, seed);
}

static void *prepare_batches(void *arg)
{
	static float batch[T * D];
	unsigned seed = 7;
	(void)arg;
	/* The next batch is ready long before it is needed: the worker
	 * tokenizes one, then waits a little, as an input pipeline does. */
	while (!stop) {
		tokenize(batch, &seed);
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	unsigned seed = 1;
	static float x[T * D];
	fill(wq, D * D, &seed);
	fill(wk, D * D, &seed);
	fill(wv, D * D, &seed);
	fill(w1, D * H, &seed);
	fill(w2, H * D, &seed);
	pthread_t th;
	pthread_create(&th, NULL, prepare_batches, NULL);
	double end = now() + secs;
	while (now() < end) {
		fill(x, T * D, &seed);
		run_model(x, 4);
	}
	stop = 1;
	pthread_join(th, NULL);
	return 0;
}
