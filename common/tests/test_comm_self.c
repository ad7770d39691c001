/* test_comm_self.c — dl_comm as a world of one (no launcher): every operation
 * works and behaves as the one-rank case of the collective. The multi-rank
 * behaviour is tested under mpirun by tools/test-comm.sh. */
#include "tests.h"

#include <stdio.h> // snprintf
#include <stdlib.h> // setenv, unsetenv, free
#include <string.h> // memset

#include "dl/cli.h" // dl_cli_single_process, DL_CLI_RUN
#include "dl/comm.h"
#include "dl/ops.h" // dl_add
#include "dl/p2plog.h" // dl_p2plog_start, dl_p2plog_events
#include "dl/rank.h" // dl_rank_exit
#include "dl/trace.h" // dl_trace_start, dl_trace_events

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
    ck_assert_uint_eq(s.messages, 1);
    ck_assert_uint_eq(s.calls[DL_OP_BARRIER], 1);
    ck_assert_str_eq(dl_comm_op_name(DL_OP_SENDRECV), "sendrecv");
    dl_comm_finalize(c);
}
END_TEST

/* A world of one's point-to-point: messages to itself are copies, counted
 * like any other; empty sides and out-of-range peers behave as on P ranks. */
START_TEST(test_world_of_one_p2p)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c;
    ck_assert(dl_comm_init(NULL, NULL, &c) == DL_OK);
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0}, z[6] = {0};
    dl_comm_req *r[2];
    ck_assert_st(dl_comm_isendrecv(c, x, 6, 0, y, 6, 0, DL_F32, &r[0]), DL_OK);
    ck_assert_st(dl_comm_isendrecv(c, x + 2, 3, 0, z, 3, 0, DL_F32, &r[1]), DL_OK);
    ck_assert_st(dl_comm_wait(c, r[1]), DL_OK);
    ck_assert_st(dl_comm_wait(c, r[0]), DL_OK);
    ck_assert(y[0] == 1 && y[5] == 6);
    ck_assert(z[0] == 3 && z[2] == 5 && z[3] == 0);
    ck_assert_st(dl_comm_isendrecv(c, NULL, 0, 0, NULL, 0, 0, DL_F32, &r[0]), DL_OK);
    ck_assert_st(dl_comm_wait(c, r[0]), DL_OK);
    ck_assert_st(dl_comm_sendrecv(c, NULL, 0, 0, NULL, 0, 0, DL_F64), DL_OK);
    ck_assert_st(dl_comm_sendrecv(c, x, 2, 0, y, 2, 0, DL_F32), DL_OK);
    r[0] = (dl_comm_req *)r; // a refused call leaves NULL
    ck_assert_st(dl_comm_isendrecv(c, x, 1, 1, y, 1, 0, DL_F32, &r[0]), DL_ERR_ARG);
    ck_assert(r[0] == NULL);
    ck_assert_st(dl_comm_isendrecv(c, x, 2, 0, y, 3, 0, DL_F32, &r[0]), DL_ERR_ARG);
    ck_assert_st(dl_comm_isendrecv(c, NULL, 2, 0, y, 2, 0, DL_F32, &r[0]), DL_ERR_ARG);
    ck_assert_st(dl_comm_isendrecv(c, x, 2, 0, y, 2, 0, DL_DTYPE_COUNT, &r[0]), DL_ERR_ARG);
    ck_assert_st(dl_comm_isendrecv(c, x, 2, 0, y, 2, 0, DL_F32, NULL), DL_ERR_ARG);
    ck_assert_st(dl_comm_wait(c, NULL), DL_ERR_ARG);
    dl_comm_stats s;
    dl_comm_stats_get(c, &s);
    // 5 calls started: 6 + 3 + 0 + 0 + 2 floats sent, in 3 non-empty sends
    ck_assert_uint_eq(s.calls[DL_OP_SENDRECV], 5);
    ck_assert_uint_eq(s.bytes[DL_OP_SENDRECV], 11 * sizeof(float));
    ck_assert_uint_eq(s.messages, 3);
    ck_assert(s.seconds[DL_OP_SENDRECV] >= 0);
    dl_comm_stats_reset(c);
    dl_comm_stats_get(c, &s);
    ck_assert_uint_eq(s.messages, 0);
    dl_comm_finalize(c);
}
END_TEST

/* The kit's record: what was started, finished and added, in order, with
 * the ranges; nothing before dl_p2plog_start or after dl_p2plog_stop. */
START_TEST(test_p2plog)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c;
    ck_assert(dl_comm_init(NULL, NULL, &c) == DL_OK);
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    dl_comm_req *r;
    ck_assert_st(dl_comm_sendrecv(c, x, 1, 0, y, 1, 0, DL_F32), DL_OK); // not recorded
    dl_p2plog_start(0);
    ck_assert_st(dl_comm_isendrecv(c, x, 2, 0, y, 2, 0, DL_F32, &r), DL_OK);
    ck_assert_st(dl_add(dl_cpu(), x + 2, y, 2, DL_F32), DL_OK); // while the request is open
    ck_assert_st(dl_add(dl_cpu(), x, y, 0, DL_F32), DL_OK); // empty: not recorded
    ck_assert_st(dl_comm_wait(c, r), DL_OK);
    ck_assert_st(dl_comm_allreduce(c, x, 4, DL_F32, DL_RED_SUM), DL_OK);
    ck_assert_st(dl_comm_sendrecv(c, x, 3, 1, y, 3, 0, DL_F32), DL_ERR_ARG); // refused: not recorded
    dl_p2plog_stop();
    ck_assert_st(dl_comm_sendrecv(c, x, 1, 0, y, 1, 0, DL_F32), DL_OK); // not recorded
    size_t n = 0, dropped = 1;
    const dl_p2p_ev *e = dl_p2plog_events(&n, &dropped);
    ck_assert_uint_eq(n, 5);
    ck_assert_uint_eq(dropped, 0);
    ck_assert(e[0].kind == DL_P2P_START && e[0].op == DL_OP_SENDRECV && e[0].id == 0);
    ck_assert(e[0].a == x && e[0].a_bytes == 2 * sizeof(float) && e[0].b == y && e[0].b_bytes == 2 * sizeof(float));
    ck_assert(e[1].kind == DL_P2P_ADD && e[1].a == x + 2 && e[1].b == y && e[1].a_bytes == 2 * sizeof(float));
    ck_assert(e[2].kind == DL_P2P_WAIT && e[2].id == 0);
    ck_assert(e[3].kind == DL_P2P_START && e[3].op == DL_OP_ALLREDUCE && e[3].id == 1);
    ck_assert(e[4].kind == DL_P2P_WAIT && e[4].id == 1);
    ck_assert_str_eq(dl_p2plog_kind_name(DL_P2P_ADD), "add");
    dl_p2plog_start(2); // a cap: later events are counted, not kept
    for (int k = 0; k < 3; k++)
        ck_assert_st(dl_comm_sendrecv(c, x, 1, 0, y, 1, 0, DL_F32), DL_OK);
    dl_p2plog_stop();
    e = dl_p2plog_events(&n, &dropped);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(dropped, 4);
    ck_assert(e[1].kind == DL_P2P_WAIT && e[1].id == 0);
    dl_comm_finalize(c);
}
END_TEST

/* A driver's way out: the message on stderr, the exit code for main. */
START_TEST(test_rank_exit)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c;
    ck_assert(dl_comm_init(NULL, NULL, &c) == DL_OK);
    dl_error_set(DL_ERR_ARG, "--hidden '0': expected a width");
    capture cap;
    capture_start(&cap, 2);
    int code = dl_rank_exit(c, DL_ERR_ARG, "labX");
    char *err = capture_stop(&cap);
    ck_assert_int_eq(code, 2);
    ck_assert_str_eq(err, "labX: error: --hidden '0': expected a width\n");
    free(err);
    dl_error_set(DL_OK, "%s", ""); // no message: the status names itself
    capture_start(&cap, 2);
    code = dl_rank_exit(NULL, DL_ERR_NOMEM, "labX"); // dl_comm_init failed: no communicator
    err = capture_stop(&cap);
    ck_assert_int_eq(code, 1);
    ck_assert_has(err, "labX: error: ");
    free(err);
}
END_TEST

/* The verdict on the ranks' device claims (dl_comm_check_claims), the logic
 * dl_rank_device runs on every rank before any opens a device: exercised here
 * for worlds of any shape; tools/test-comm.sh runs it under mpirun. */
static dl_comm_claim claim(const char *host, int ordinal, int gpus)
{
    dl_comm_claim w;
    memset(&w, 0, sizeof w);
    snprintf(w.host, sizeof w.host, "%s", host);
    w.ordinal = ordinal;
    w.gpus = gpus;
    return w;
}

START_TEST(test_claims)
{
    // every rank on the CPU, or one GPU each: fine
    dl_comm_claim cpu3[3] = {claim("a", -1, 0), claim("a", -1, 4), claim("b", -1, -1)};
    ck_assert_st(dl_comm_check_claims(cpu3, 3), DL_OK);
    dl_comm_claim own[4] = {claim("a", 0, 2), claim("a", 1, 2), claim("b", 0, 1), claim("c", 0, 1)};
    ck_assert_st(dl_comm_check_claims(own, 4), DL_OK);
    ck_assert_st(dl_comm_check_claims(own, 1), DL_OK);

    // --device cuda:0 on two ranks of one host
    dl_comm_claim same[2] = {claim("h1", 0, 1), claim("h1", 0, 1)};
    ck_assert_st(dl_comm_check_claims(same, 2), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "ranks 0 and 1 both use GPU 0 on host h1: NCCL needs one GPU per rank");
    ck_assert_has(dl_last_error(), "dlrun -n 1");
    ck_assert_has(dl_last_error(), "--device cpu");
    // ... on two hosts it is two GPUs
    same[1] = claim("h2", 0, 1);
    ck_assert_st(dl_comm_check_claims(same, 2), DL_OK);

    // --device cuda (cuda:LOCAL_RANK) with two ranks on one GPU: rank 1 asks for cuda:1
    dl_comm_claim two_on_one[2] = {claim("h1", 0, 1), claim("h1", 1, 1)};
    ck_assert_st(dl_comm_check_claims(two_on_one, 2), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "ranks 0 and 1 would both use GPU 0 on host h1: it has 1 GPU(s) for 2 ranks");
    ck_assert_has(dl_last_error(), "rank 1 asks for cuda:1");
    // three ranks on two GPUs: rank 2 would share GPU 0 with rank 0
    dl_comm_claim three_on_two[3] = {claim("h", 0, 2), claim("h", 1, 2), claim("h", 2, 2)};
    ck_assert_st(dl_comm_check_claims(three_on_two, 3), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "ranks 0 and 2 would both use GPU 0 on host h: it has 2 GPU(s) for 3 ranks");
    ck_assert_has(dl_last_error(), "dlrun -n 2");
    // the refusal is the same, word for word, on every rank: it depends on the claims only
    char first[1024];
    snprintf(first, sizeof first, "%s", dl_last_error());
    ck_assert_st(dl_comm_check_claims(three_on_two, 3), DL_ERR_ARG);
    ck_assert_str_eq(dl_last_error(), first);

    // a GPU the host lacks, without more ranks than GPUs: a missing device
    dl_comm_claim missing[2] = {claim("h", 2, 2), claim("h", 3, 2)};
    ck_assert_st(dl_comm_check_claims(missing, 2), DL_ERR_NO_DEVICE);
    ck_assert_has(dl_last_error(), "rank 0 asks for cuda:2, but host h has 2 GPU(s) (0..1)");
    dl_comm_claim none[2] = {claim("h", 0, 0), claim("h", 1, 0)};
    snprintf(none[0].why, sizeof none[0].why, "cudaGetDeviceCount: no CUDA-capable device is detected");
    ck_assert_st(dl_comm_check_claims(none, 2), DL_ERR_NO_DEVICE);
    ck_assert_has(dl_last_error(), "no CUDA GPU answers on host h (cudaGetDeviceCount: no CUDA-capable device");
    none[0].gpus = none[1].gpus = -1;
    ck_assert_st(dl_comm_check_claims(none, 2), DL_ERR_NO_CUDA);
    ck_assert_has(dl_last_error(), "this build has no CUDA");

    // some ranks on a GPU, others on the CPU: NCCL cannot start
    dl_comm_claim mixed[3] = {claim("h", -1, 0), claim("h", 0, 4), claim("h", 1, 4)};
    ck_assert_st(dl_comm_check_claims(mixed, 3), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "rank 1 uses cuda:0 but rank 0 the CPU");
}
END_TEST

/* In a world of one there is nothing to agree on: dl_device_open has the say. */
START_TEST(test_claim_world_of_one)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c;
    ck_assert(dl_comm_init(NULL, NULL, &c) == DL_OK);
    ck_assert_st(dl_comm_claim_device(c, DL_DEVICE_CUDA, 7), DL_OK);
    ck_assert_st(dl_comm_claim_device(c, DL_DEVICE_CPU, 0), DL_OK);
    ck_assert_st(dl_comm_use_device(c, dl_cpu()), DL_OK);
    dl_comm_finalize(c);
}
END_TEST

/* The transport's log: nothing before dl_comm_log_start, then every
 * operation started, in order, with its buffer, count, dtype, reduction and
 * the trace span it opened (allreduces, while the trace records); a call
 * its checks refuse is not there; the cap counts the rest as dropped. */
START_TEST(test_log)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c;
    ck_assert(dl_comm_init(NULL, NULL, &c) == DL_OK);
    float x[4] = {1, 2, 3, 4};
    int32_t flag = 0;
    size_t n = 9, dropped = 9;
    ck_assert_st(dl_comm_allreduce(c, x, 4, DL_F32, DL_RED_SUM), DL_OK); // before the log: not in it
    ck_assert(dl_comm_log(c, &n, &dropped) == NULL);
    ck_assert(n == 0 && dropped == 0);
    dl_comm_log_start(c, 4);
    dl_trace_clear();
    dl_trace_start(0);
    dl_comm_req *req = NULL;
    ck_assert_st(dl_comm_allreduce_async(c, x + 2, 2, DL_F32, DL_RED_SUM, &req), DL_OK);
    ck_assert_st(dl_comm_wait(c, req), DL_OK);
    ck_assert_st(dl_comm_allreduce(c, &flag, 1, DL_I32, DL_RED_MAX), DL_OK);
    ck_assert_st(dl_comm_allreduce(c, &flag, 1, DL_I32, DL_RED_AVG), DL_ERR_ARG); // refused: not logged
    dl_trace_stop();
    ck_assert_st(dl_comm_barrier(c), DL_OK);
    ck_assert_st(dl_comm_broadcast(c, x, 4, DL_F32, 0), DL_OK);
    ck_assert_st(dl_comm_broadcast(c, x, 4, DL_F32, 0), DL_OK); // the fifth: past the cap
    const dl_comm_rec *r = dl_comm_log(c, &n, &dropped);
    ck_assert(n == 4 && dropped == 1);
    ck_assert(r[0].op == DL_OP_ALLREDUCE_ASYNC && r[0].buf == x + 2 && r[0].count == 2 && r[0].t == DL_F32);
    ck_assert(r[1].op == DL_OP_ALLREDUCE && r[1].buf == &flag && r[1].count == 1 && r[1].red == DL_RED_MAX);
    ck_assert(r[2].op == DL_OP_BARRIER && r[2].trace == -1);
    ck_assert(r[3].op == DL_OP_BROADCAST && r[3].count == 4 && r[3].trace == -1);
    size_t ne = 0;
    const dl_span *ev = dl_trace_events(&ne);
    ck_assert(r[0].trace >= 0 && (size_t)r[0].trace < ne && r[1].trace > r[0].trace && (size_t)r[1].trace < ne);
    ck_assert(ev[r[0].trace].kind == DL_EV_ALLREDUCE && ev[r[0].trace].async == 1 && ev[r[0].trace].bytes == 8);
    ck_assert(ev[r[1].trace].kind == DL_EV_ALLREDUCE && ev[r[1].trace].async == 0 && ev[r[1].trace].bytes == 4);
    dl_comm_log_start(c, 100); // a second start changes nothing
    ck_assert_st(dl_comm_barrier(c), DL_OK);
    dl_comm_log(c, &n, &dropped);
    ck_assert(n == 4 && dropped == 2);
    dl_trace_clear();
    dl_comm_finalize(c);
}
END_TEST

/* Clears every variable dl_comm_slurm_tasks and launched() read, then sets
 * the NULL-terminated name, value pairs. */
static void slurm_env(const char *const *kv)
{
    static const char *const all[] = {
        "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",     "PMIX_RANK",    "PMIX_SIZE",     "SLURM_JOB_ID",
        "SLURM_STEP_ID",        "SLURM_STEPID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
        "SLURM_STEP_NUM_TASKS", "WORLD_SIZE"};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        unsetenv(all[k]);
    for (; kv[0] != NULL; kv += 2)
        setenv(kv[0], kv[1], 1);
}

/* Slurm's variables: a task of an srun step of several is launched (and a
 * single-process lab refuses it); a batch script's own process, where sbatch
 * sets SLURM_PROCID=0 and the allocation's SLURM_NTASKS but no step id, is
 * a world of one; an MPI launcher's variables win over an inherited step. */
START_TEST(test_slurm_tasks)
{
    static const char *const batch[] = {
        "SLURM_JOB_ID", "1234", "SLURM_NTASKS", "8", "SLURM_PROCID", "0", "SLURM_LOCALID", "0", NULL};
    slurm_env(batch);
    ck_assert_int_eq(dl_comm_slurm_tasks(), 0);
    dl_comm *c;
    ck_assert_st(dl_comm_init(NULL, NULL, &c), DL_OK);
    ck_assert_int_eq(dl_comm_size(c), 1);
    ck_assert_str_eq(dl_comm_backend(c), "self");
    dl_comm_finalize(c);
    ck_assert_int_eq(dl_cli_single_process("labXX"), DL_CLI_RUN);

    static const char *const one[] = {"SLURM_JOB_ID",
                                      "1234",
                                      "SLURM_STEP_ID",
                                      "0",
                                      "SLURM_PROCID",
                                      "0",
                                      "SLURM_NTASKS",
                                      "1",
                                      "SLURM_STEP_NUM_TASKS",
                                      "1",
                                      NULL};
    slurm_env(one); // srun -n 1: a world of one, no MPI
    ck_assert_int_eq(dl_comm_slurm_tasks(), 1);
    ck_assert_st(dl_comm_init(NULL, NULL, &c), DL_OK);
    ck_assert_str_eq(dl_comm_backend(c), "self");
    dl_comm_finalize(c);
    ck_assert_int_eq(dl_cli_single_process("labXX"), DL_CLI_RUN);

    static const char *const step[] = {"SLURM_JOB_ID",
                                       "1234",
                                       "SLURM_STEP_ID",
                                       "3",
                                       "SLURM_PROCID",
                                       "5",
                                       "SLURM_NTASKS",
                                       "8",
                                       "SLURM_STEP_NUM_TASKS",
                                       "8",
                                       NULL};
    slurm_env(step);
    ck_assert_int_eq(dl_comm_slurm_tasks(), 8);
    capture err;
    capture_start(&err, 2);
    int rc = dl_cli_single_process("labXX");
    char *text = capture_stop(&err);
    ck_assert_int_eq(rc, DL_CLI_ERROR);
    ck_assert_has(text, "labXX: error: this lab runs as one process, but srun started it as one of 8 tasks");
    free(text);

    static const char *const old_names[] = {"SLURM_STEPID", "0", "SLURM_PROCID", "1", "SLURM_NTASKS", "4", NULL};
    slurm_env(old_names); // SLURM_STEPID, and SLURM_NTASKS without SLURM_STEP_NUM_TASKS
    ck_assert_int_eq(dl_comm_slurm_tasks(), 4);
    static const char *const bad[] = {
        "SLURM_STEP_ID", "0", "SLURM_PROCID", "1", "SLURM_STEP_NUM_TASKS", "4x", "SLURM_NTASKS", "-2", NULL};
    slurm_env(bad);
    ck_assert_int_eq(dl_comm_slurm_tasks(), 0);
    // mpirun's ranks on another node inherit the step of its daemons (one per node)
    static const char *const under_mpirun[] = {
        "SLURM_STEP_ID", "0", "SLURM_PROCID", "1", "SLURM_STEP_NUM_TASKS", "2", "OMPI_COMM_WORLD_SIZE", "8", NULL};
    slurm_env(under_mpirun);
    ck_assert_int_eq(dl_comm_slurm_tasks(), 0);
    static const char *const under_mpiexec[] = {
        "SLURM_STEP_ID", "0", "SLURM_PROCID", "1", "SLURM_STEP_NUM_TASKS", "2", "PMI_SIZE", "8", NULL};
    slurm_env(under_mpiexec);
    ck_assert_int_eq(dl_comm_slurm_tasks(), 0);
    static const char *const none[] = {NULL};
    slurm_env(none);
}
END_TEST

/* The launchers' variables: one list (dl_comm_launcher), read the same way
 * by dl_comm_init, dl_comm_slurm_tasks and dl_cli_single_process. */
START_TEST(test_launcher)
{
    static const char *const none[] = {NULL};
    slurm_env(none);
    const char *var = "x";
    int mpi = 7;
    ck_assert_int_eq(dl_comm_launcher(&var, &mpi), 0);
    ck_assert(var == NULL && mpi == 0);
    static const char *const mpirun[] = {"OMPI_COMM_WORLD_SIZE", "4", "WORLD_SIZE", "4", NULL}; // dlrun sets both
    slurm_env(mpirun);
    ck_assert_int_eq(dl_comm_launcher(&var, &mpi), 4);
    ck_assert(strcmp(var, "OMPI_COMM_WORLD_SIZE") == 0 && mpi == 1);
    static const char *const pmix[] = {"PMIX_RANK", "0", NULL}; // no size: one rank as far as it says
    slurm_env(pmix);
    ck_assert_int_eq(dl_comm_launcher(&var, &mpi), 1);
    ck_assert(strcmp(var, "PMIX_RANK") == 0 && mpi == 1);
    static const char *const pmix_size[] = {"PMIX_RANK", "1", "PMIX_SIZE", "3", NULL};
    slurm_env(pmix_size);
    ck_assert_int_eq(dl_comm_launcher(&var, NULL), 3);
    ck_assert_str_eq(var, "PMIX_SIZE");
    static const char *const junk[] = {"PMI_SIZE", "many", NULL};
    slurm_env(junk);
    ck_assert_int_eq(dl_comm_launcher(NULL, NULL), 1);
    // torchrun's variables: not an MPI launcher (a Slurm step beside it still counts), refused by a one-process lab
    static const char *const torchrun[] = {
        "WORLD_SIZE", "2", "SLURM_STEP_ID", "0", "SLURM_PROCID", "1", "SLURM_STEP_NUM_TASKS", "2", NULL};
    slurm_env(torchrun);
    ck_assert_int_eq(dl_comm_launcher(&var, &mpi), 2);
    ck_assert(strcmp(var, "WORLD_SIZE") == 0 && mpi == 0);
    ck_assert_int_eq(dl_comm_slurm_tasks(), 2);
    static const char *const torchrun_alone[] = {"WORLD_SIZE", "2", NULL};
    slurm_env(torchrun_alone);
    capture err;
    capture_start(&err, 2);
    int rc = dl_cli_single_process("labXX");
    char *text = capture_stop(&err);
    ck_assert_int_eq(rc, DL_CLI_ERROR);
    ck_assert_has(text, "labXX: error: this lab runs as one process, but it was started as one of 2 ranks "
                        "(WORLD_SIZE=2)");
    free(text);
    slurm_env(none);
}
END_TEST

Suite *comm_suite(void)
{
    return suite_of("comm", tcase_with_timeout("world_of_one", 10),
                    TESTS(test_world_of_one, test_world_of_one_p2p, test_p2plog, test_rank_exit, test_claims,
                          test_claim_world_of_one, test_log, test_slurm_tasks, test_launcher));
}
