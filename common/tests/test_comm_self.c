/* test_comm_self.c — dl_comm as a world of one (no launcher): every operation
 * works and behaves as the one-rank case of the collective. The multi-rank
 * behaviour is tested under mpirun by tools/test-comm.sh. */
#include "tests.h"

#include <stdlib.h> // unsetenv

#include "dl/comm.h"

START_TEST(test_world_of_one)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c;
    ck_assert(dl_comm_init(NULL, NULL, &c) == DL_OK);
    ck_assert_int_eq(dl_comm_rank(c), 0);
    ck_assert_int_eq(dl_comm_size(c), 1);
    ck_assert_str_eq(dl_comm_backend(c), "self");
    float x[4] = {1, 2, 3, 4}, g[4];
    ck_assert(dl_comm_allreduce(c, x, 4, DL_F32, DL_RED_AVG) == DL_OK);
    ck_assert(x[0] == 1 && x[3] == 4);
    ck_assert(dl_comm_broadcast(c, x, 4, DL_F32, 0) == DL_OK);
    ck_assert(dl_comm_broadcast(c, x, 4, DL_F32, 1) == DL_ERR_ARG);
    ck_assert(dl_comm_allgather(c, x, g, 4, DL_F32) == DL_OK);
    ck_assert(g[2] == 3);
    ck_assert(dl_comm_sendrecv(c, x, 4, 0, g, 4, 0, DL_F32) == DL_OK);
    ck_assert(dl_comm_sendrecv(c, x, 4, 1, g, 4, 0, DL_F32) == DL_ERR_ARG);
    ck_assert(dl_comm_barrier(c) == DL_OK);
    dl_comm_req *r;
    ck_assert(dl_comm_allreduce_async(c, x, 4, DL_F32, DL_RED_SUM, &r) == DL_OK);
    ck_assert(dl_comm_wait(c, r) == DL_OK);
    int64_t i8[2] = {5, 6};
    ck_assert(dl_comm_allreduce(c, i8, 2, DL_I64, DL_RED_AVG) == DL_ERR_ARG);
    dl_comm_stats s;
    dl_comm_stats_get(c, &s);
    ck_assert_uint_eq(s.calls[DL_OP_ALLREDUCE], 1);
    ck_assert_uint_eq(s.bytes[DL_OP_ALLREDUCE], 16);
    ck_assert_uint_eq(s.calls[DL_OP_ALLREDUCE_ASYNC], 1);
    ck_assert_uint_eq(s.calls[DL_OP_BROADCAST], 1);
    ck_assert_uint_eq(s.calls[DL_OP_ALLGATHER], 1);
    ck_assert_uint_eq(s.calls[DL_OP_SENDRECV], 1);
    ck_assert_uint_eq(s.calls[DL_OP_BARRIER], 1);
    ck_assert_str_eq(dl_comm_op_name(DL_OP_SENDRECV), "sendrecv");
    dl_comm_finalize(c);
}
END_TEST

Suite *comm_suite(void)
{
    Suite *s = suite_create("comm");
    TCase *tc = tcase_with_timeout("world_of_one", 10);
    tcase_add_test(tc, test_world_of_one);
    suite_add_tcase(s, tc);
    return s;
}
