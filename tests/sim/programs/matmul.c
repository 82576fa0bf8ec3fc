/* Integer matrix multiply: 16x16 int32 (wrapping) and 12x12 int16 -> int32. */
#include "aquas_rt.h"

#define N 16
#define K 12

static int A[N][N], B[N][N], C[N][N];
static short P[K][K], Q[K][K];
static int R[K][K];

static void matmul32(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            unsigned acc = 0; /* wrapping arithmetic, defined in C */
            for (int k = 0; k < N; k++)
                acc += (unsigned)A[i][k] * (unsigned)B[k][j];
            C[i][j] = (int)acc;
        }
}

static void matmul16(void)
{
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++) {
            int acc = 0;
            for (int k = 0; k < K; k++)
                acc += P[i][k] * Q[k][j];
            R[i][j] = acc;
        }
}

int main(void)
{
    unsigned s = 1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            s = s * 1664525u + 1013904223u;
            A[i][j] = (int)s;
            s = s * 1664525u + 1013904223u;
            B[i][j] = (int)(s >> 20) - 2048;
        }
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++) {
            s = s * 1664525u + 1013904223u;
            P[i][j] = (short)(s >> 16);
            Q[i][j] = (short)((int)(s & 0xFFFF) - 32768);
        }
    AQUAS_REGION_BEGIN(1);
    matmul32();
    AQUAS_REGION_END(1);
    AQUAS_REGION_BEGIN(2);
    matmul16();
    AQUAS_REGION_END(2);
    unsigned trace = 0, check = 0;
    for (int i = 0; i < N; i++) {
        trace += (unsigned)C[i][i];
        for (int j = 0; j < N; j++)
            check = (check ^ (unsigned)C[i][j]) * 16777619u;
    }
    printf("int32 %dx%d: trace=%08x fnv=%08x C[0][0]=%d C[15][15]=%d\n", N, N, trace, check, C[0][0],
           C[N - 1][N - 1]);
    for (int i = 0; i < N; i += 5)
        printf("C[%2d][0..3] = %11d %11d %11d %11d\n", i, C[i][0], C[i][1], C[i][2], C[i][3]);
    int rsum = 0;
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
            rsum ^= R[i][j] + i * K + j;
    printf("int16 %dx%d: R[0][0]=%d R[5][7]=%d R[11][11]=%d xor=%x\n", K, K, R[0][0], R[5][7], R[K - 1][K - 1],
           (unsigned)rsum);
    return 0;
}
