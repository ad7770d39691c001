# bench_speedup.gp — lab 05 bench: the bucketed run's speedup over one rank,
# measured on this machine at 1, 2 and 4 ranks (beyond its cores, ranks share
# them), and projected on the target for the same ranks, against ideal.
# Variables: measured (lab05_scaling.csv), projected (projection.csv), profile, cores.
set title sprintf("Lab 05: speedup of the bucketed step, measured here (%d cores) and projected on %s", cores, profile)
set xlabel 'ranks (GPUs in the projection)'
set ylabel 'speedup over one'
set xtics (1, 2, 4)
set xrange [0.8:4.2]
set yrange [0:4.5]
set key top left
set arrow 1 from cores + 0.05, graph 0 to cores + 0.05, graph 1 nohead dt 3 lc rgb "gray"
set label 1 "this machine's cores" at cores + 0.1, graph 0.92 textcolor rgb "gray40"
plot x with lines dt 2 lc rgb "gray" title 'ideal', \
     projected using "ranks":"bucketed" with linespoints ls 1 title 'projected (bucketed)', \
     measured using (strcol("mode") eq "bucketed" ? column("ranks") : 1/0):"speedup" with linespoints ls 2 \
          title 'measured here (bucketed, fp32)'
