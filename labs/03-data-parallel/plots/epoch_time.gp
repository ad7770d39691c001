# epoch_time.gp — lab 03: a steady epoch (after the first, which warms up) of
# the naive first attempt against DDP, measured here, with both projected on
# the target against the same one-GPU baseline. Variables: data
# (epoch_time.csv: run,epoch_s), pnaive, pddp (projected speedups; pddp <= 0:
# DDP's run was not projected), P, profile.
ddp = (pddp > 0) ? sprintf("DDP %.2f×", pddp) : "DDP not projected"
set title sprintf("A steady epoch: four serial copies vs data parallelism (%d ranks, measured here)\n%s", P, \
    sub(sprintf("projected on %s: naive %.2f×, %s the speed of one GPU", profile, pnaive, ddp)))
set style data histograms
set style fill solid 0.85 border -1
set boxwidth 0.6
set ylabel "a steady epoch's time on this machine (s)"
set yrange [0:*]
set xtics nomirror
set bmargin 4.5 # the run names take two lines
unset key
# "naive: every rank all rows and no sync" on two lines, split after the colon
two_lines(s) = strstrt(s, ': ') > 0 ? substr(s, 1, strstrt(s, ': ')) . "\n" . substr(s, strstrt(s, ': ') + 2, strlen(s)) : s
plot data using "epoch_s":xtic(two_lines(strcol(1))) ls 1, \
     '' using 0:"epoch_s":(sprintf('%.3f s', column("epoch_s"))) with labels offset 0,1
