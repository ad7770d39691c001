/* record.c — record.h: an append-only array with a ceiling and a count of
 * what did not fit. */
#include "record.h"

#include <stdlib.h> // realloc, free

void *dl_record_push_(dl_record *r, size_t size, size_t first)
{
    if (r->n >= r->limit) {
        r->dropped++;
        return NULL;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : first;
        cap = cap < r->limit ? cap : r->limit;
        void *more = realloc(r->items, cap * size);
        if (more == NULL) {
            r->dropped++;
            return NULL;
        }
        r->items = more;
        r->cap = cap;
    }
    return (char *)r->items + r->n++ * size;
}

void dl_record_free_(dl_record *r)
{
    free(r->items);
    *r = (dl_record){.limit = r->limit};
}
