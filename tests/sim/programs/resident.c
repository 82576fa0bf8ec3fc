/* Resident scratchpads against every writer of their memory (docs/isax-port.md, "Snoop").
 * vnearest (examples/pointcloud/pointcloud.isax) bursts a 64-point cloud into a scratchpad
 * the unit keeps resident across calls; this program changes the cloud between calls in
 * every way a program can, and checks each answer against the plain-C scan (-DUSE_ISAX
 * builds call the instruction; both builds print the same lines).
 *   region 1: 16 queries on an unchanged cloud (the unit may skip all bursts but the first)
 *   region 2: 16 queries, each after a core store into the cloud (no call may skip it)
 *   then: a cloud point moved by the core, by a byte store, by the unit itself (v3ddist
 *   writes its 16 distances over the cloud), and a second cloud at another address. */
#include "aquas_rt.h"
#ifdef USE_ISAX
#include "aquas_isax.h"
#endif

#define NPTS 64

/* cloud[0..191]: the points; v3ddist's window (48 words of points, then 16 distances)
 * covers cloud[128..191], so its distances overwrite the last 16 points */
static int cloud[3 * NPTS] __attribute__((aligned(8)));
static int other[3 * NPTS] __attribute__((aligned(8)));
static int blk[3 * 16] __attribute__((aligned(8)));
static int q[3] __attribute__((aligned(8)));

static unsigned seed = 777u;
static int rnd(void) {
    seed = seed * 1103515245u + 12345u;
    return (int)(seed >> 8) % 4001 - 2000;
}

static int sw_nearest(const int *p, const int *c) {
    unsigned best = 0xffffffffu;
    int bi = 0;
    for (int j = 0; j < NPTS; j++) {
        int dx = c[3 * j] - p[0], dy = c[3 * j + 1] - p[1], dz = c[3 * j + 2] - p[2];
        unsigned d = (unsigned)(dx * dx + dy * dy + dz * dz);
        if (d < best) {
            best = d;
            bi = j;
        }
    }
    return bi;
}

static int nearest(const int *p, const int *c) {
#ifdef USE_ISAX
    return (int)aquas_vnearest((unsigned)p, (unsigned)c);
#else
    return sw_nearest(p, c);
#endif
}

static void dist(const int *a, int *b) {
#ifdef USE_ISAX
    (void)aquas_v3ddist((unsigned)a, (unsigned)b);
#else
    for (int i = 0; i < 16; i++) {
        int dx = a[3 * i] - b[3 * i], dy = a[3 * i + 1] - b[3 * i + 1], dz = a[3 * i + 2] - b[3 * i + 2];
        b[48 + i] = dx * dx + dy * dy + dz * dz;
    }
#endif
}

static int errors;
static void check(const char *what, int k, const int *c) {
    int got = nearest(q, c);
    int want = sw_nearest(q, c);
    if (got != want) {
        errors++;
        printf("%s %d: %d != %d\n", what, k, got, want);
    }
    printf("%s %d: %d\n", what, k, got);
}

/* a query exactly at point j: its answer is j unless an earlier point coincides */
static void query_at(const int *c, int j) {
    q[0] = c[3 * j];
    q[1] = c[3 * j + 1];
    q[2] = c[3 * j + 2];
}

int main(void) {
    for (int i = 0; i < 3 * NPTS; i++) {
        cloud[i] = rnd();
        other[i] = rnd();
    }
    for (int i = 0; i < 3 * 16; i++) blk[i] = rnd();

    int fixed[16], stored[16];
    static int queries[16][3];
    for (int k = 0; k < 16; k++) {
        queries[k][0] = rnd(); queries[k][1] = rnd(); queries[k][2] = rnd();
    }
    AQUAS_REGION_BEGIN(1);
    for (int k = 0; k < 16; k++)
        fixed[k] = nearest(queries[k], cloud);
    AQUAS_REGION_END(1);
    for (int k = 0; k < 16; k++) {
        int want = sw_nearest(queries[k], cloud);
        if (fixed[k] != want) errors++;
        printf("fixed %d: %d\n", k, fixed[k]);
    }

    AQUAS_REGION_BEGIN(2);
    for (int k = 0; k < 16; k++) {
        int j = (5 * k + 3) % NPTS;
        cloud[3 * j] += 1000 + k; /* a core store into the claimed range */
        query_at(cloud, j);
        stored[k] = nearest(q, cloud);
    }
    AQUAS_REGION_END(2);
    for (int k = 0; k < 16; k++)
        printf("stored %d: %d\n", k, stored[k]);

    /* the answers of region 1 against software, now that the cloud has changed */
    for (int k = 0; k < 4; k++) {
        q[0] = rnd(); q[1] = rnd(); q[2] = rnd();
        check("recheck", k, cloud);
    }
    /* a byte store into the middle of a word of the last point */
    check("before-byte", 0, cloud);
    query_at(cloud, 40);
    q[1] ^= 0x5a5a;
    check("before-byte", 1, cloud);
    ((volatile unsigned char *)&cloud[3 * 40 + 1])[1] ^= 0x5a;
    check("byte", 0, cloud);
    /* the unit's own writes: v3ddist writes 16 distances over cloud[176..191] */
    query_at(cloud, 60);
    check("before-unit", 0, cloud);
    dist(blk, &cloud[128]);
    query_at(cloud, 60);
    check("unit", 0, cloud);
    q[0] = 0; q[1] = 0; q[2] = 0;
    check("unit", 1, cloud);
    /* another cloud, then the first one again */
    query_at(other, 7);
    check("other", 0, other);
    check("back", 0, cloud);
    check("other", 1, other);

    printf("errors %d\n", errors);
    return errors != 0;
}
