/* pipe.c — lab 07, tasks 4-6: the stages, and one step of the pipeline in
 * two orders (pipe.h has the contract). */
#include "pipe.h"

dl_status pp_layers(int L, int P, int s, int *first, int *last)
{
    if (first == NULL || last == NULL || P < 1 || P > L || s < 0 || s >= P)
        return dl_error_set(DL_ERR_ARG, "pp_layers: stage %d of %d over %d layers: expected 1 <= P <= L, 0 <= s < P", s,
                            P, L);
    return DL_TODO("lab07 task 4: stage s's run of layers");
}


dl_status pp_gpipe(pp_stage *st)
{
    return DL_TODO("lab07 task 5: every forward, then every backward");
}

dl_status pp_1f1b(pp_stage *st)
{
    return DL_TODO("lab07 task 6: one forward, one backward, at most P - s micro-batches held");
}
