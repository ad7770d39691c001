/* record.h — where the kit's own records keep their items: an append-only
 * array that holds at most `limit` items and counts the rest as dropped.
 * dl/p2plog.h's record, dl_comm's log (dl_comm_log) and dl/trace.h's
 * timeline each keep theirs in one. Kit-internal (not a dl/ header).
 *
 * Contract
 * - A zeroed dl_record is empty and holds nothing (limit 0): its owner sets
 *   limit before the first push. The items stay where they are until the next
 *   push (which may move them) or dl_record_free.
 * - dl_record_push_ grows the array by doubling from `first` items, never
 *   past limit. When limit items are kept, or memory runs out, the item is
 *   counted in dropped and not kept: a record never fails its caller. An
 *   owner may start over (n = 0, dropped = 0) with another limit; the
 *   memory is kept.
 */
#ifndef DL_RECORD_H
#define DL_RECORD_H

#include <stddef.h> // size_t

typedef struct dl_record {
    void *items; /* n items of the owner's type kept, room for cap */
    size_t n, cap, limit, dropped;
} dl_record;

/* The slot for one more item of `size` bytes (n grows by one), or NULL when
 * it is dropped. */
void *dl_record_push_(dl_record *r, size_t size, size_t first);
/* Frees the items and forgets them (n, cap and dropped 0); the limit stays. */
void dl_record_free_(dl_record *r);

#endif /* DL_RECORD_H */
