/* The point-cloud kernels of examples/pointcloud/pointcloud.isax, once in plain C and once
 * through the generated aquas_isax.h (build with -DUSE_ISAX). Both builds print the same
 * lines; region 1 times the kernels. */
#include "aquas_rt.h"
#ifdef USE_ISAX
#include "aquas_isax.h"
#endif

#define N 16

static int a[3 * N] __attribute__((aligned(8)));
static int b[3 * N + N] __attribute__((aligned(8))); /* points, then 16 distances */
static int cov[16] __attribute__((aligned(8)));      /* centroid (4 words), then 6 x i64 */
static int mv[20] __attribute__((aligned(8)));       /* 4x4 matrix, then x */
static int y[4] __attribute__((aligned(8)));
static int v[N] __attribute__((aligned(8)));
static int vmax[2] __attribute__((aligned(8)));

static unsigned seed = 12345u;
static int rnd(void) {
    seed = seed * 1103515245u + 12345u;
    return (int)(seed >> 8) % 2001 - 1000;
}

#ifndef USE_ISAX
static unsigned sw_v3ddist(const int *p, int *q) {
    unsigned sum = 0;
    for (int i = 0; i < N; i++) {
        int dx = p[3 * i] - q[3 * i], dy = p[3 * i + 1] - q[3 * i + 1], dz = p[3 * i + 2] - q[3 * i + 2];
        unsigned d = (unsigned)(dx * dx + dy * dy + dz * dz);
        q[3 * N + i] = (int)d;
        sum += d;
    }
    return sum;
}

static unsigned sw_vcovmat3d(const int *p, int *c) {
    long long s[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < N; i++) {
        long long dx = (long long)p[3 * i] - c[0], dy = (long long)p[3 * i + 1] - c[1],
                  dz = (long long)p[3 * i + 2] - c[2];
        s[0] += dx * dx; s[1] += dx * dy; s[2] += dx * dz;
        s[3] += dy * dy; s[4] += dy * dz; s[5] += dz * dz;
    }
    long long *out = (long long *)(c + 4);
    for (int k = 0; k < 6; k++) out[k] = s[k];
    return (unsigned)(s[0] + s[3] + s[5]);
}

static void sw_vgemv4(const int *m, int *out) {
    for (int r = 0; r < 4; r++) {
        int acc = 0;
        for (int k = 0; k < 4; k++) acc += m[4 * r + k] * m[16 + k];
        out[r] = acc;
    }
}

static unsigned sw_vmaxarg(const int *p, int *out) {
    unsigned idx = 0;
    for (unsigned i = 1; i < N; i++)
        if (p[i] > p[idx]) idx = i;
    out[0] = p[idx];
    return idx;
}
#endif

int main(void) {
    for (int i = 0; i < 3 * N; i++) { a[i] = rnd(); b[i] = rnd(); }
    cov[0] = 3; cov[1] = -7; cov[2] = 11; cov[3] = 0;
    for (int i = 0; i < 20; i++) mv[i] = rnd();
    for (int i = 0; i < N; i++) v[i] = rnd() * 1000;

    unsigned r1, r2, r4;
    AQUAS_REGION_BEGIN(1);
#ifdef USE_ISAX
    r1 = aquas_v3ddist((uint32_t)a, (uint32_t)b);
    r2 = aquas_vcovmat3d((uint32_t)a, (uint32_t)cov);
    aquas_vgemv4((uint32_t)mv, (uint32_t)y);
    r4 = aquas_vmaxarg((uint32_t)v, (uint32_t)vmax);
#else
    r1 = sw_v3ddist(a, b);
    r2 = sw_vcovmat3d(a, cov);
    sw_vgemv4(mv, y);
    r4 = sw_vmaxarg(v, vmax);
#endif
    AQUAS_REGION_END(1);

    unsigned h = 0;
    for (int i = 0; i < N; i++) h = h * 31u + (unsigned)b[3 * N + i];
    printf("v3ddist sum=%u hash=%x\n", r1, h);
    printf("vcovmat3d trace=%u", r2);
    for (int k = 4; k < 16; k++) printf(" %x", (unsigned)cov[k]);
    printf("\n");
    printf("vgemv4 %d %d %d %d\n", y[0], y[1], y[2], y[3]);
    printf("vmaxarg idx=%u max=%d\n", r4, vmax[0]);
    return 0;
}
