# memory.gp — lab 06: memory per rank against the number of ranks for DDP,
# ZeRO-1 and FSDP (the closed form, kit_mem_bytes), with the run's own ledger
# as a point. Variables: data (memory.csv), P (the run's ranks), mode (its mode).
set title sprintf("Lab 06: memory per rank (fp32, SGD with momentum); measured: %s on %d rank(s)", mode, P)
set xlabel 'ranks (GPUs), P'
set logscale x 2
set xrange [0.8:80]
set xtics (1, 2, 4, 8, 16, 32, 64)
set ylabel 'memory per rank (MiB)'
set yrange [0:*]
MiB = 1024.0 * 1024.0
is(m, s) = strcol("mode") eq m && strcol("source") eq s
eval key_below(2)
plot data using (is("ddp", "model") ? column("ranks") : NaN):(column("total") / MiB) with linespoints ls 1 \
         title 'DDP: everything replicated', \
     data using (is("zero1", "model") ? column("ranks") : NaN):(column("total") / MiB) with linespoints ls 2 \
         title 'ZeRO-1: momentum sharded', \
     data using (is("fsdp", "model") ? column("ranks") : NaN):(column("total") / MiB) with linespoints ls 3 \
         title 'FSDP: parameters, gradients and momentum sharded', \
     data using (strcol("source") eq "measured" ? column("ranks") : NaN):(column("total") / MiB) with points \
         pt 7 ps 2 lc rgb 'black' title sprintf("this run's ledger (%s, rank 0's peak)", mode)
