# step_memory.gp — lab 06: what rank 0 holds during one training step, by
# kind, after each allocation and free of its ledger (kit_mem_watch).
# Variables: data (memory_step.csv), P, mode.
stats data using "event" name "E" nooutput
set title sprintf("Lab 06: rank 0's memory during one step, %s on %d rank(s)", mode, P)
set xlabel 'allocations and frees during the step, in order'
set ylabel 'memory held (MiB)'
set yrange [0:*]
set xrange [0:(E_max > 0 ? E_max : 1)]
if (E_max <= 1) { set label 1 "nothing is allocated or freed during the step: the memory is flat" at graph 0.5, graph 0.55 center }
MiB = 1024.0 * 1024.0
set style fill solid 0.8 noborder
eval key_below(2)
# stacked: each curve is the sum of its kind and those drawn below it
plot data using "event":(column("total") / MiB) with fillsteps ls 5 title 'ring and exchange scratch', \
     data using "event":((column("total") - column("comm")) / MiB) with fillsteps ls 4 title 'activations', \
     data using "event":((column("params") + column("grads") + column("optim")) / MiB) with fillsteps ls 3 title 'momentum', \
     data using "event":((column("params") + column("grads")) / MiB) with fillsteps ls 2 title 'gradients (shards and whole layers)', \
     data using "event":(column("params") / MiB) with fillsteps ls 1 title 'parameters (shards and gathered layers)'
