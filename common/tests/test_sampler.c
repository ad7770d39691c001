/* test_sampler.c — the kit's distributed sampler: shard sizes against the
 * closed forms, hand-worked shards (padding, drop_last, stratified), the
 * shuffled order against its definition, stratified per-class balance, and
 * rejected arguments. */
#include "tests.h"

#include <stdlib.h> // malloc, calloc, free

#include "dl/rng.h" // dl_rng (the permutation the sampler must follow)
#include "dl/sampler.h"

static dl_sampler sampler(size_t n, int rank, int world, int shuffle, int drop_last, const int32_t *labels, int C)
{
    dl_sampler s = {n, rank, world, 42, 0, shuffle, drop_last, labels, C};
    return s;
}

START_TEST(shard_sizes_closed_form)
{
    for (size_t n = 1; n <= 40; n++) {
        for (int P = 1; P <= 9; P++) {
            dl_sampler pad = sampler(n, 0, P, 1, 0, NULL, 0), drop = sampler(n, 0, P, 1, 1, NULL, 0);
            ck_assert_uint_eq(dl_sampler_num_samples(&pad), (n + (size_t)P - 1) / (size_t)P);
            ck_assert_uint_eq(dl_sampler_num_samples(&drop), n / (size_t)P);
        }
    }
    dl_sampler none = sampler(10, 0, 0, 1, 0, NULL, 0);
    ck_assert_uint_eq(dl_sampler_num_samples(&none), 0);
    ck_assert_uint_eq(dl_sampler_num_samples(NULL), 0);
}
END_TEST

static void expect_shard(dl_sampler s, const size_t *want, size_t per)
{
    size_t out[16];
    ck_assert_uint_eq(dl_sampler_num_samples(&s), per);
    ck_assert_st(dl_sampler_indices(&s, out), DL_OK);
    for (size_t k = 0; k < per; k++)
        ck_assert_msg(out[k] == want[k], "rank %d of %d, position %zu: got row %zu, expected %zu", s.rank, s.world, k,
                      out[k], want[k]);
}

START_TEST(unshuffled_shards_by_hand)
{
    // n = 10 on 4 ranks: 0..9 padded with 0, 1 to 12 rows; rank r takes r, r + 4, r + 8
    const size_t pad[4][3] = {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}};
    const size_t drop[4][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
    for (int r = 0; r < 4; r++) {
        expect_shard(sampler(10, r, 4, 0, 0, NULL, 0), pad[r], 3);
        expect_shard(sampler(10, r, 4, 0, 1, NULL, 0), drop[r], 2);
    }
    // a world of one gets every row in order
    const size_t all[5] = {0, 1, 2, 3, 4};
    expect_shard(sampler(5, 0, 1, 0, 0, NULL, 0), all, 5);
    // fewer rows than ranks: padding repeats row 0 and row 1
    const size_t few[3][1] = {{0}, {1}, {0}};
    for (int r = 0; r < 3; r++)
        expect_shard(sampler(2, r, 3, 0, 0, NULL, 0), few[r], 1);
}
END_TEST

START_TEST(stratified_shards_by_hand)
{
    // class 0: rows 0 2 4 5, class 1: rows 1 3 6, class 2: row 7, dealt to 3
    // ranks with the count running on: 0→r0 2→r1 4→r2 5→r0 | 1→r1 3→r2 6→r0 | 7→r1
    const int32_t y[8] = {0, 1, 0, 1, 0, 0, 1, 2};
    const size_t pad[3][3] = {{0, 5, 6}, {2, 1, 7}, {4, 3, 4}}; // rank 2 padded with its first row
    const size_t drop[3][2] = {{0, 5}, {2, 1}, {4, 3}};
    for (int r = 0; r < 3; r++) {
        expect_shard(sampler(8, r, 3, 0, 0, y, 3), pad[r], 3);
        expect_shard(sampler(8, r, 3, 0, 1, y, 3), drop[r], 2);
    }
}
END_TEST

/* n < P: a rank dealt no row takes position r mod n of the dealt order. */
START_TEST(stratified_fewer_rows_than_ranks)
{
    const int32_t labels[3] = {0, 1, 0}; // dealt order: rows 0, 2 (class 0), then 1
    const size_t want[4] = {0, 2, 1, 0};
    for (int r = 0; r < 4; r++) {
        dl_sampler s = {.n = 3, .rank = r, .world = 4, .seed = 1, .labels = labels, .C = 2};
        size_t out[1] = {99};
        ck_assert_uint_eq(dl_sampler_num_samples(&s), 1);
        ck_assert_st(dl_sampler_indices(&s, out), DL_OK);
        ck_assert_msg(out[0] == want[r], "rank %d of 4 on 3 rows: row %zu, expected %zu", r, out[0], want[r]);
    }
}
END_TEST

START_TEST(shuffled_order_follows_the_seeded_permutation)
{
    size_t n = 103, perm[103], out[103];
    for (int epoch = 0; epoch < 3; epoch++) {
        dl_rng r;
        dl_rng_seed(&r, 42 + (uint64_t)epoch, DL_SAMPLER_STREAM);
        dl_rng_permutation(&r, perm, n);
        for (int P = 1; P <= 4; P++) {
            for (int rank = 0; rank < P; rank++) {
                for (int drop_last = 0; drop_last < 2; drop_last++) {
                    dl_sampler s = sampler(n, rank, P, 1, drop_last, NULL, 0);
                    dl_sampler_set_epoch(&s, epoch);
                    ck_assert_int_eq(s.epoch, epoch);
                    size_t per = dl_sampler_num_samples(&s);
                    ck_assert_st(dl_sampler_indices(&s, out), DL_OK);
                    int wrong = 0;
                    for (size_t k = 0; k < per; k++)
                        wrong += out[k] != perm[((size_t)rank + k * (size_t)P) % n];
                    ck_assert_msg(wrong == 0, "epoch %d, rank %d of %d: %d rows differ from perm[(r + kP) %% n]", epoch,
                                  rank, P, wrong);
                }
            }
        }
    }
}
END_TEST

START_TEST(stratified_classes_balanced_across_ranks)
{
    enum { N = 1000, C = 10, P = 4 };
    int32_t *y = malloc(N * sizeof *y);
    dl_rng r;
    dl_rng_seed(&r, 5, 5);
    for (int i = 0; i < N; i++) // skewed: class 0 about three times as common as each other class
        y[i] = (int32_t)(dl_rng_below(&r, 55) < 10 ? 0 : dl_rng_below(&r, C));
    size_t counts[P][C] = {{0}}, seen[N] = {0}, out[N / P], first[N / P];
    for (int rank = 0; rank < P; rank++) {
        dl_sampler s = sampler(N, rank, P, 1, 0, y, C);
        dl_sampler_set_epoch(&s, 2);
        ck_assert_uint_eq(dl_sampler_num_samples(&s), N / P);
        ck_assert_st(dl_sampler_indices(&s, out), DL_OK);
        for (size_t k = 0; k < N / P; k++) {
            counts[rank][y[out[k]]]++;
            seen[out[k]]++;
        }
        // shuffled within the shard: not sorted by class
        int sorted = 1;
        for (size_t k = 1; k < N / P; k++)
            sorted &= y[out[k - 1]] <= y[out[k]];
        ck_assert_msg(!sorted, "rank %d's rows come sorted by class", rank);
        // another epoch, another order
        dl_sampler_set_epoch(&s, 3);
        memcpy(first, out, sizeof out);
        ck_assert_st(dl_sampler_indices(&s, out), DL_OK);
        ck_assert_msg(memcmp(first, out, sizeof out) != 0, "epochs 2 and 3 give rank %d the same rows", rank);
    }
    for (int i = 0; i < N; i++) // N divisible by P: no padding, every row once
        ck_assert_msg(seen[i] == 1, "row %d dealt %zu times", i, seen[i]);
    for (int c = 0; c < C; c++) {
        size_t lo = counts[0][c], hi = counts[0][c];
        for (int rank = 1; rank < P; rank++) {
            lo = counts[rank][c] < lo ? counts[rank][c] : lo;
            hi = counts[rank][c] > hi ? counts[rank][c] : hi;
        }
        ck_assert_msg(hi - lo <= 1, "class %d: ranks hold %zu to %zu rows", c, lo, hi);
    }
    free(y);
}
END_TEST

START_TEST(rejected_arguments)
{
    size_t out[8];
    const int32_t y[4] = {0, 1, 5, 0};
    dl_sampler s = sampler(0, 0, 2, 1, 0, NULL, 0);
    ck_assert_st(dl_sampler_indices(&s, out), DL_ERR_ARG);
    s = sampler(4, 2, 2, 1, 0, NULL, 0);
    ck_assert_st(dl_sampler_indices(&s, out), DL_ERR_ARG);
    s = sampler(4, -1, 2, 1, 0, NULL, 0);
    ck_assert_st(dl_sampler_indices(&s, out), DL_ERR_ARG);
    s = sampler(4, 0, 2, 1, 0, NULL, 0);
    ck_assert_st(dl_sampler_indices(&s, NULL), DL_ERR_ARG);
    ck_assert_st(dl_sampler_indices(NULL, out), DL_ERR_ARG);
    s = sampler(4, 0, 2, 1, 0, y, 0);
    ck_assert_st(dl_sampler_indices(&s, out), DL_ERR_ARG);
    s = sampler(4, 0, 2, 0, 0, y, 2);
    ck_assert_st(dl_sampler_indices(&s, out), DL_ERR_RANGE);
    ck_assert_has(dl_last_error(), "label 5 of row 2 is outside [0, 2)");
}
END_TEST

Suite *sampler_suite(void)
{
    return suite_of("sampler", tcase_with_timeout("sampler", 20),
                    TESTS(shard_sizes_closed_form, unshuffled_shards_by_hand, stratified_shards_by_hand,
                          stratified_fewer_rows_than_ranks, shuffled_order_follows_the_seeded_permutation,
                          stratified_classes_balanced_across_ranks, rejected_arguments));
}
