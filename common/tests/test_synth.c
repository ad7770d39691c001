/* test_synth.c — the synthetic generator: exact class counts, determinism,
 * missing values, feature-scale spread, and its k=v parser. */
#include "tests.h"

#include <math.h> // isnan, sqrt, log10
#include <stdlib.h> // free

#include "dl/data.h" // dl_synth_*, dl_synthetic

static dl_dataset make(const char *kv)
{
    dl_synth_params p;
    dl_synth_defaults(&p);
    ck_assert_st(dl_synth_parse(kv, &p), DL_OK);
    dl_dataset ds;
    ck_assert_st(dl_synthetic(&p, &ds), DL_OK);
    return ds;
}

static void counts_of(const dl_dataset *ds, size_t *counts)
{
    dl_dataset_class_counts(ds, counts);
    size_t total = 0;
    for (int c = 0; c < ds->n_classes; c++)
        total += counts[c];
    ck_assert_uint_eq(total, ds->n); // every label is in range
}

START_TEST(defaults)
{
    dl_synth_params p;
    dl_synth_defaults(&p);
    ck_assert_uint_eq(p.n, 1000);
    ck_assert_uint_eq(p.d, 8);
    ck_assert_int_eq(p.classes, 2);
    ck_assert_double_eq(p.imbalance, 0.0);
    ck_assert_double_eq(p.scale_spread, 0.0);
    ck_assert_double_eq(p.missing, 0.0);
    ck_assert_double_eq(p.separation, 1.5);
    ck_assert_uint_eq(p.seed, 1);
    ck_assert_st(dl_synth_parse("n=20000,d=3,classes=5,imbalance=0.1,scale_spread=2.5,missing=0.2,"
                                "sep=3,seed=12345678901234567890",
                                &p),
                 DL_OK);
    ck_assert_uint_eq(p.n, 20000);
    ck_assert_uint_eq(p.d, 3);
    ck_assert_int_eq(p.classes, 5);
    ck_assert_double_eq(p.imbalance, 0.1);
    ck_assert_double_eq(p.scale_spread, 2.5);
    ck_assert_double_eq(p.missing, 0.2);
    ck_assert_double_eq(p.separation, 3.0);
    ck_assert_uint_eq(p.seed, 12345678901234567890ull); // exact, not via a double
}
END_TEST

START_TEST(exact_class_counts)
{
    size_t counts[5];
    dl_dataset ds = make("n=1000,classes=2,imbalance=0.02");
    ck_assert_int_eq(ds.n_classes, 2);
    counts_of(&ds, counts);
    ck_assert_uint_eq(counts[1], 20);
    ck_assert_uint_eq(counts[0], 980);
    dl_dataset_free(&ds);
    // 10/3 each: the one left over goes to the first class.
    ds = make("n=10,classes=3");
    counts_of(&ds, counts);
    ck_assert_uint_eq(counts[0], 4);
    ck_assert_uint_eq(counts[1], 3);
    ck_assert_uint_eq(counts[2], 3);
    dl_dataset_free(&ds);
    // Last class 10%, the rest share 90% equally.
    ds = make("n=1001,classes=4,imbalance=0.1");
    counts_of(&ds, counts);
    ck_assert_uint_eq(counts[3], 100); // 100.1
    ck_assert_uint_eq(counts[0], 301); // 300.3 each; remainders .3 .3 .3 .1 hand one out
    ck_assert_uint_eq(counts[1], 300);
    ck_assert_uint_eq(counts[2], 300);
    dl_dataset_free(&ds);
    // The labels are shuffled, not sorted by class.
    ds = make("n=1000,classes=2");
    size_t changes = 0;
    for (size_t i = 1; i < ds.n; i++)
        changes += ds.y[i] != ds.y[i - 1];
    ck_assert_uint_gt(changes, 300);
    dl_dataset_free(&ds);
}
END_TEST

START_TEST(same_seed_same_data)
{
    dl_dataset a = make("n=3000,d=6,classes=3,missing=0.1,scale_spread=2,seed=5");
    dl_dataset b = make("n=3000,d=6,classes=3,missing=0.1,scale_spread=2,seed=5");
    dl_dataset c = make("n=3000,d=6,classes=3,missing=0.1,scale_spread=2,seed=6");
    ck_assert_mem_eq(a.X, b.X, a.n * a.d * sizeof *a.X); // bit for bit, NaNs included
    ck_assert_mem_eq(a.y, b.y, a.n * sizeof *a.y);
    size_t same_x = 0, same_y = 0;
    for (size_t i = 0; i < a.n * a.d; i++)
        same_x += memcmp(&a.X[i], &c.X[i], sizeof a.X[i]) == 0;
    for (size_t i = 0; i < a.n; i++)
        same_y += a.y[i] == c.y[i];
    ck_assert_uint_lt(same_x, a.n * a.d / 20); // only shared NaNs, by chance
    ck_assert_uint_lt(same_y, a.n * 2 / 3); // a third match by chance
    dl_dataset_free(&a), dl_dataset_free(&b), dl_dataset_free(&c);
}
END_TEST

START_TEST(missing_fraction)
{
    dl_dataset ds = make("n=20000,d=10,missing=0.1,seed=3");
    size_t nan = 0;
    for (size_t i = 0; i < ds.n * ds.d; i++)
        nan += isnan(ds.X[i]) != 0;
    double frac = (double)nan / (double)(ds.n * ds.d);
    ck_assert_msg(fabs(frac - 0.1) < 0.005, "missing fraction %.4f", frac);
    dl_dataset_free(&ds);
    ds = make("n=2000,d=5");
    nan = 0;
    for (size_t i = 0; i < ds.n * ds.d; i++)
        nan += isnan(ds.X[i]) != 0;
    ck_assert_uint_eq(nan, 0);
    dl_dataset_free(&ds);
}
END_TEST

static void feature_std(const dl_dataset *ds, double *sd)
{
    for (size_t j = 0; j < ds->d; j++) {
        double s = 0, s2 = 0;
        for (size_t i = 0; i < ds->n; i++) {
            double x = ds->X[i * ds->d + j];
            s += x;
            s2 += x * x;
        }
        double m = s / (double)ds->n;
        sd[j] = sqrt(s2 / (double)ds->n - m * m);
    }
}

START_TEST(scale_spread)
{
    double sd[6];
    dl_dataset ds = make("n=20000,d=6,scale_spread=4,seed=9");
    feature_std(&ds, sd);
    // Scales run from 10^-2 to 10^2 in equal ratios; class means add at
    // most a small factor to each feature's spread.
    for (size_t j = 1; j < 6; j++)
        ck_assert_msg(sd[j] > sd[j - 1], "std %zu = %g, %zu = %g", j - 1, sd[j - 1], j, sd[j]);
    double decades = log10(sd[5] / sd[0]);
    ck_assert_msg(fabs(decades - 4.0) < 0.5, "std ratio spans %.2f decades", decades);
    ck_assert_msg(sd[0] > 0.005 && sd[0] < 0.05, "smallest std %g", sd[0]);
    dl_dataset_free(&ds);
    ds = make("n=20000,d=6,seed=9");
    feature_std(&ds, sd);
    for (size_t j = 1; j < 6; j++)
        ck_assert_msg(fabs(log10(sd[j] / sd[0])) < 0.5, "spread 0: std %zu = %g vs %g", j, sd[j], sd[0]);
    dl_dataset_free(&ds);
}
END_TEST

START_TEST(bad_keys)
{
    dl_synth_params p;
    dl_synth_defaults(&p);
    const struct {
        const char *kv, *named;
    } bad[] = {
        {"colour=3", "unknown key 'colour'"},
        {"n=abc", "n=abc"},
        {"n=0", "n=0"},
        {"n=2.5", "an integer"},
        {"d=", "d="},
        {"classes=1", "classes=1"},
        {"imbalance=1", "imbalance=1"},
        {"missing=-0.1", "missing=-0.1"},
        {"sep=1e9", "sep=1e9"},
        {"n", "'n' is not key=value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_st(dl_synth_parse(bad[i].kv, &p), DL_ERR_ARG);
        ck_assert_has(dl_last_error(), bad[i].named);
    }
    ck_assert_uint_eq(p.n, 1000); // nothing was stored from the bad pairs
    ck_assert_st(dl_synth_parse("", &p), DL_OK);
    ck_assert_st(dl_synth_parse("n=5,,d=2,", &p), DL_OK);
    ck_assert_uint_eq(p.n, 5);
    ck_assert_uint_eq(p.d, 2);
    dl_dataset ds;
    p.classes = 1;
    ck_assert_st(dl_synthetic(&p, &ds), DL_ERR_ARG);
}
END_TEST

Suite *synth_suite(void)
{
    return suite_of("synth", tcase_with_timeout("synth", 30),
                    TESTS(defaults, exact_class_counts, same_seed_same_data, missing_fraction, scale_spread, bad_keys));
}
