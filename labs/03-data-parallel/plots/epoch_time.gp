# epoch_time.gp — lab 03: an epoch of the naive first attempt against DDP,
# measured here and projected on the target. Variables: naive, ddp (seconds
# here), pnaive, pddp (projected speedups), P, profile.
set title sprintf("One epoch: four serial copies vs data parallelism (%d ranks, measured here)\n%s", P, \
    sub(sprintf("projected on %s: naive %.2fx, DDP %.2fx the speed of one GPU", profile, pnaive, pddp)))
set style fill solid 0.85 border -1
set boxwidth 0.6
set ylabel 'epoch time here (s)'
set xrange [-0.6:1.6]
set yrange [0:*]
set xtics ("naive: every rank all rows, no sync" 0, "DDP: sharded rows + gradient allreduce" 1) nomirror
unset key
set samples 2
plot '+' using 1:($1 < 0.5 ? naive : ddp) with boxes ls 1, \
     '+' using 1:($1 < 0.5 ? naive : ddp):(sprintf('%.3f s', $1 < 0.5 ? naive : ddp)) with labels offset 0,1
