# projection.gp — lab 06: one training step of this model projected onto each
# shipped profile's GPUs (kit_project_step), DDP vs ZeRO-1 vs FSDP, the
# exposed communication shaded. Variables: data (projection.csv), batch.
set title sprintf("Lab 06: one step projected on each profile's GPUs (%d rows a GPU)", batch)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'projected step time (ms)'
set yrange [0:*]
set xtics rotate by -25 nomirror
set bmargin 5
set offsets 0, 0, graph 0.05, 0
# inside, above the fast machines' short bars (over the slow ones it would cover a bar)
set key inside top center vertical opaque
plot data using "ddp_ms":xtic(1) ls 1 title 'DDP (one allreduce)', \
     '' using "zero1_ms" ls 2 title 'ZeRO-1 (reduce-scatter, shard step, all-gather)', \
     '' using "fsdp_ms" ls 3 title 'FSDP (a layer gathered at a time, prefetched)'
