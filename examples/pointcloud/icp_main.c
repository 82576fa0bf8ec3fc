/* Point-cloud case study: a few iterations of point-to-point ICP (iterative closest point)
 * on 64 fixed-point 3-D points, bare metal on RV32IM.
 *
 * A deterministic source cloud (integer LCG) is aligned to a target cloud that is the
 * source rotated by about 5 degrees (z) and -3 degrees (x), translated, perturbed by a
 * little noise and shuffled.  Each iteration
 *
 *   region 1  nearest neighbour  for every source point: the nearest target point by a
 *                                linear scan (icp_nearest ~ vnearest), its squared
 *                                distance; the matched target points are gathered
 *                                block-wise
 *   region 2  covariance         centroids of both clouds, scatter matrix of the source
 *                                about its centroid (icp_block_scatter ~ vcovmat3d) and the
 *                                cross term sum (p - cp) x (q - cq) (software)
 *   region 5  pose solve         one Gauss-Newton step for a small rotation w:
 *                                (tr(S) I - S) w = cross, by Cramer's rule in int64, then
 *                                R = I + [w]x + [w]x^2 / 2 and t = cq - R cp (Q14)
 *   region 3  transform          every source point p <- (R p + t) >> 14 with a 3x4 Q14
 *                                matrix [R | t] (icp_transform, software)
 *   region 4  convergence        residual sum of squared distances to the matched points
 *                                (icp_block_dist ~ v3ddist on the gathered blocks); stop
 *                                when the nearest-neighbour error no longer drops
 *
 * Output: per iteration the nearest-neighbour error, the rotation step and the residual;
 * at the end the error against the noise-free ground truth and a checksum of the
 * transformed points.  Everything is integer arithmetic, so the output is deterministic.
 */
#include <stdint.h>

#include "aquas_rt.h"
#include "icp_kernels.h"

#define N_POINTS ICP_POINTS
#define N_BLOCKS (N_POINTS / ICP_BLOCK)
#define N_ITER 4
#define Q 14 /* fixed-point fraction bits of rotations and of the transform matrix */
#define ONE (1 << Q)

/* Ground truth: Rz(5 deg) * Rx(-3 deg) in Q14, and a translation. */
static const int32_t R_TRUE[3][3] = {
    {16322, -1426, -75},
    {1428, 16299, 854},
    {0, -857, 16362},
};
static const int32_t T_TRUE[3] = {70, -45, 30};

static int32_t src[N_POINTS * 3] __attribute__((aligned(8)));   /* moving cloud */
static int32_t truth[N_POINTS * 3];                             /* true position of src[i] */
static int32_t tgt[N_POINTS * 3] __attribute__((aligned(8)));   /* fixed cloud */
/* Per block: 16 matched target points (48 words), then 16 residual distances. */
static int32_t match[N_BLOCKS * 64] __attribute__((aligned(8)));
static int32_t cov[16] __attribute__((aligned(8)));    /* centre, pad, 6 x int64 sums */
static int32_t xform[12] __attribute__((aligned(8)));  /* [R | t + rounding] in Q14 */

static uint32_t seed = 0x1CB0u;

static uint32_t rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

/* Rotate by a Q14 matrix with rounding. */
static int32_t rot_row(const int32_t *r, int32_t x, int32_t y, int32_t z)
{
    return (r[0] * x + r[1] * y + r[2] * z + ONE / 2) >> Q;
}

static void make_clouds(void)
{
    for (int i = 0; i < N_POINTS; i++) {
        /* a bumpy surface patch: x, y in [-1500, 1500], z a coarse function of them */
        int32_t x = (int32_t)(rnd() % 3001u) - 1500;
        int32_t y = (int32_t)(rnd() % 3001u) - 1500;
        int32_t z = (x * x - y * y) / 3000 + (int32_t)(rnd() % 401u) - 200;
        src[3 * i] = x;
        src[3 * i + 1] = y;
        src[3 * i + 2] = z;
        for (int k = 0; k < 3; k++)
            truth[3 * i + k] = rot_row(R_TRUE[k], x, y, z) + T_TRUE[k];
    }
    /* target j = true position of source point (37 j + 11) mod 64, plus noise in [-3, 3] */
    for (int j = 0; j < N_POINTS; j++) {
        int i = (37 * j + 11) % N_POINTS;
        for (int k = 0; k < 3; k++)
            tgt[3 * j + k] = truth[3 * i + k] + (int32_t)(rnd() % 7u) - 3;
    }
}

static int64_t det3(const int64_t a[3][3])
{
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
           a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* Solve A w = b (A symmetric 3x3) for w in Q14, by Cramer's rule after scaling A and b
 * below 2^14 so that every product fits in int64.  Each component is clamped to +-0.25. */
static void solve_rotation(int64_t a[3][3], int64_t b[3], int32_t w[3])
{
    int64_t m = 0;
    for (int r = 0; r < 3; r++) {
        if (abs64(b[r]) > m)
            m = abs64(b[r]);
        for (int c = 0; c < 3; c++)
            if (abs64(a[r][c]) > m)
                m = abs64(a[r][c]);
    }
    int s = 0;
    while ((m >> s) >= ONE)
        s++;
    for (int r = 0; r < 3; r++) {
        b[r] >>= s;
        for (int c = 0; c < 3; c++)
            a[r][c] >>= s;
    }
    int64_t det = det3((const int64_t(*)[3])a);
    for (int i = 0; i < 3; i++) {
        int64_t ai[3][3];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                ai[r][c] = c == i ? b[r] : a[r][c];
        int64_t wi = det == 0 ? 0 : det3((const int64_t(*)[3])ai) * ONE / det;
        if (wi > ONE / 4)
            wi = ONE / 4;
        if (wi < -ONE / 4)
            wi = -ONE / 4;
        w[i] = (int32_t)wi;
    }
}

int main(void)
{
    make_clouds();
    printf("ICP: %d points, %d blocks of %d, up to %d iterations\n", N_POINTS, N_BLOCKS,
           ICP_BLOCK, N_ITER);

    uint32_t prev_err = 0xFFFFFFFFu;
    for (int it = 0; it < N_ITER; it++) {
        /* ---- 1: nearest neighbours ---------------------------------------------------- */
        AQUAS_REGION_BEGIN(1);
        uint32_t nn_err = 0;
        for (int i = 0; i < N_POINTS; i++) {
            const int32_t *p = &src[3 * i];
            const int32_t *q = &tgt[3 * icp_nearest(p, tgt)];
            nn_err += icp_dist2(p, q);
            int32_t *dst = &match[64 * (i / ICP_BLOCK) + 3 * (i % ICP_BLOCK)];
            dst[0] = q[0];
            dst[1] = q[1];
            dst[2] = q[2];
        }
        AQUAS_REGION_END(1);

        /* ---- 2: centroids, scatter matrix, cross term ------------------------------ */
        AQUAS_REGION_BEGIN(2);
        int32_t sp[3] = {0, 0, 0};
        int32_t sq[3] = {0, 0, 0};
        for (int b = 0; b < N_BLOCKS; b++) {
            icp_block_sum(&src[ICP_BLOCK_WORDS * b], sp);
            icp_block_sum(&match[64 * b], sq);
        }
        int32_t cp[3], cq[3];
        for (int k = 0; k < 3; k++) {
            cp[k] = sp[k] / N_POINTS;
            cq[k] = sq[k] / N_POINTS;
            cov[k] = cp[k];
        }
        cov[3] = 0;
        int64_t scat[6] = {0, 0, 0, 0, 0, 0}; /* Sxx Sxy Sxz Syy Syz Szz */
        int64_t cross[3] = {0, 0, 0};
        uint32_t trace = 0;
        for (int b = 0; b < N_BLOCKS; b++) {
            trace += icp_block_scatter(&src[ICP_BLOCK_WORDS * b], cov);
            for (int k = 0; k < 6; k++)
                scat[k] += (int64_t)(((uint64_t)(uint32_t)cov[5 + 2 * k] << 32) |
                                     (uint32_t)cov[4 + 2 * k]);
            icp_block_cross(&src[ICP_BLOCK_WORDS * b], &match[64 * b], cp, cq, cross);
        }
        AQUAS_REGION_END(2);

        /* ---- 5: pose solve (software) ----------------------------------------------- */
        AQUAS_REGION_BEGIN(5);
        int64_t a[3][3] = {
            {scat[3] + scat[5], -scat[1], -scat[2]},
            {-scat[1], scat[0] + scat[5], -scat[4]},
            {-scat[2], -scat[4], scat[0] + scat[3]},
        };
        int32_t w[3];
        solve_rotation(a, cross, w);
        /* R = I + W + W^2 / 2 with W = [w]x (Q14) */
        int32_t wm[3][3] = {{0, -w[2], w[1]}, {w[2], 0, -w[0]}, {-w[1], w[0], 0}};
        int32_t rm[3][3];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                int32_t w2 = 0;
                for (int k = 0; k < 3; k++)
                    w2 += wm[r][k] * wm[k][c];
                rm[r][c] = (r == c ? ONE : 0) + wm[r][c] + w2 / (2 * ONE);
            }
        /* rows of [R | (cq << Q) - R cp + 1/2] */
        for (int r = 0; r < 3; r++) {
            int32_t rcp = rm[r][0] * cp[0] + rm[r][1] * cp[1] + rm[r][2] * cp[2];
            for (int c = 0; c < 3; c++)
                xform[4 * r + c] = rm[r][c];
            xform[4 * r + 3] = cq[r] * ONE - rcp + ONE / 2;
        }
        AQUAS_REGION_END(5);

        /* ---- 3: apply the transform ------------------------------------------------- */
        AQUAS_REGION_BEGIN(3);
        icp_transform(xform, src);
        AQUAS_REGION_END(3);

        /* ---- 4: residual and convergence -------------------------------------------- */
        AQUAS_REGION_BEGIN(4);
        uint32_t resid = 0;
        for (int b = 0; b < N_BLOCKS; b++)
            resid += icp_block_dist(&src[ICP_BLOCK_WORDS * b], &match[64 * b]);
        int done = prev_err - nn_err < nn_err / 64u || nn_err > prev_err;
        prev_err = nn_err;
        AQUAS_REGION_END(4);

        printf("iter %d: nn_err %u trace %u w(Q14) %d %d %d t %d %d %d resid %u\n", it,
               (unsigned)nn_err, (unsigned)trace, (int)w[0], (int)w[1], (int)w[2],
               (int)(xform[3] >> Q), (int)(xform[7] >> Q), (int)(xform[11] >> Q),
               (unsigned)resid);
        if (done) {
            printf("converged after %d iterations\n", it + 1);
            break;
        }
    }

    uint32_t gt_err = 0;
    uint32_t sum = 0x811C9DC5u;
    for (int i = 0; i < 3 * N_POINTS; i++) {
        int32_t d = src[i] - truth[i];
        gt_err += (uint32_t)(d * d);
        sum = (sum ^ (uint32_t)src[i]) * 16777619u;
    }
    printf("error vs ground truth %u (mean %u per point)\n", (unsigned)gt_err,
           (unsigned)(gt_err / N_POINTS));
    printf("point 0: %d %d %d (truth %d %d %d)\n", (int)src[0], (int)src[1], (int)src[2],
           (int)truth[0], (int)truth[1], (int)truth[2]);
    printf("checksum %08x\n", (unsigned)sum);
    return 0;
}
