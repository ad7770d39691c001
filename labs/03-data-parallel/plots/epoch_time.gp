# epoch_time.gp — lab 03: a steady epoch (after the first, which warms up) of
# the naive first attempt against DDP, measured here (left), and the same
# epoch projected on the target against one GPU, the baseline of every
# speedup (right). Variables: data (epoch_time.csv: run,epoch_s), pnaive,
# pddp (projected speedups; pddp <= 0: DDP's run was not projected), P,
# profile, one_ms, naive_ms, ddp_ms (the projected epoch on one GPU, naive
# and DDP, ms; ddp_ms <= 0: not projected).
if (!exists("one_ms")) one_ms = NaN
if (!exists("naive_ms")) naive_ms = NaN
if (!exists("ddp_ms")) ddp_ms = -1
set style fill solid 0.85 border -1
set boxwidth 0.6
set yrange [0:*]
set offsets 0.2, 0.2, 0, 0
set xtics nomirror scale 0
unset key
set grid noxtics ytics
# "naive: every rank all rows and no sync" -> "naive" (the caption says the rest)
name(s) = strstrt(s, ':') > 0 ? substr(s, 1, strstrt(s, ':') - 1) : s
colour(s) = strstrt(s, 'naive') == 1 ? 0xD55E00 : 0x0072B2
set multiplot layout 1, 2 title sprintf("A steady epoch: four serial copies vs data parallelism (%d ranks)", P)
set title 'measured on this machine'
set ylabel 'seconds'
set tmargin 4
plot data using 0:"epoch_s":(0.6):(colour(strcol(1))):xtic(name(strcol(1))) with boxes lc rgb variable, \
     '' using 0:"epoch_s":(sprintf('%.3f s', column("epoch_s"))) with labels offset 0, 0.9
set title sprintf('projected on %s', profile)
set ylabel 'milliseconds'
set print $proj
print 'run,ms,speedup,colour' # a header row: the style reads one (columnhead)
print sprintf('one GPU,%.17g,%.17g,%d', one_ms, 1.0, 0x999999)
print sprintf('naive,%.17g,%.17g,%d', naive_ms, pnaive, 0xD55E00)
print sprintf('DDP,%.17g,%.17g,%d', ddp_ms > 0 ? ddp_ms : NaN, pddp > 0 ? pddp : NaN, 0x0072B2)
unset print
# each bar: its time, and its speed against one GPU (the baseline: 1.00×)
plot $proj using 0:2:(0.6):4:xtic(1) with boxes lc rgb variable, \
     '' using 0:2:(column(2) == column(2) ? sprintf("%.2f ms\n%.2f×", column(2), column(3)) : "not projected") \
        with labels offset 0, 1.6
unset multiplot
