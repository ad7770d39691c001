# epoch_time.gp — lab 03: an epoch of the naive first attempt against DDP,
# measured here, with both projected on the target. Variables: data
# (epoch_time.csv: run,epoch_s), pnaive, pddp (projected speedups), P, profile.
set title sprintf("One epoch: four serial copies vs data parallelism (%d ranks, measured here)\n%s", P, \
    sub(sprintf("projected on %s: naive %.2fx, DDP %.2fx the speed of one GPU", profile, pnaive, pddp)))
set style data histograms
set style fill solid 0.85 border -1
set boxwidth 0.6
set ylabel 'epoch time here (s)'
set yrange [0:*]
set xtics nomirror
unset key
plot data using "epoch_s":xtic(1) ls 1, '' using 0:"epoch_s":(sprintf('%.3f s', column("epoch_s"))) with labels offset 0,1
