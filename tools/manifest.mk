# manifest.mk — reads every lab's manifest (labs/NN-name/lab.mk) the way make
# reads it, checks it, and prints it, one field per line:
#
#   make -s --no-print-directory -f tools/manifest.mk
#   NN<TAB>DIR<TAB>FIELD<TAB>VALUE        (a field's whitespace, newlines too, folds to one space)
#
# Scripts read it through tools/lab.sh, never with sed: a manifest means what
# make makes of it (`+=`, `\#`, define ... endef), for the build and for every
# script alike.
#
# The fields of lab NN (LAB_NN_FIELD):
#   TITLE                the lab's title, one line (the report's section, the run's table)
#   STUDENT_C STUDENT_CU STUDENT_H
#                        the files the student edits (solutions/NN-name/ holds the references)
#   KIT_C KIT_CU         kit code of the lab: driver and grader both link it (KIT_CU where nvcc is)
#   DRIVER_C             the driver's own files beside main.c (its training, its projection): the
#                        driver links them, the grader does not (they call the student's functions)
#   CFLAGS               extra compiler flags for the student files (the Makefile applies them)
#   KIT_ANSWERS          kit files (common/...) whose code answers this lab's tasks: a release
#                        staged for this lab or an earlier one leaves them out
#   JUDGE_ANSWERS        the lab's grader files (grader/labNN_*.c) whose code answers one of its
#                        tasks (a reference scaler, a stable loss, the grader's own sampler): no
#                        release holds their source, every release with the lab holds their
#                        object instead, grader/prebuilt/NAME.o (tools/release-tree.sh; the
#                        Makefile links it where the source is missing)
#   LAUNCH               the launcher the lab's runs need (common/bin/dlrun -n 4); none: one process
#   RUN_ARGS             make run's flags for the reference driver
#   KEY_PLOT HEADLINE    make run's report: the plot the lab's section opens with (its name
#                        without .svg/.png) and the headline, a template filled from the run's
#                        summary.json (its placeholders: tools/report.c)
#   RUN2 RUN2_ARGS       a second run in make run: its folder name (inside the lab's) and flags
#   RUN2_KEY_PLOT RUN2_HEADLINE
#                        the second run's key plot and headline ({^key} reads the first run's)
#   CAPTION_<plot>       what to see in the plot <plot> (its name without extension): its caption
# tools/lab.sh checks the manifests (what a lab must have, what a value may be).
empty :=
tab := $(empty)	$(empty)
LAB_DIRS := $(patsubst labs/%/lab.mk,%,$(sort $(wildcard labs/*/lab.mk)))
include $(wildcard labs/*/lab.mk)

MANIFEST_FIELDS := TITLE STUDENT_C STUDENT_CU STUDENT_H KIT_C KIT_CU DRIVER_C CFLAGS KIT_ANSWERS JUDGE_ANSWERS LAUNCH RUN_ARGS KEY_PLOT \
                   HEADLINE RUN2 RUN2_ARGS RUN2_KEY_PLOT RUN2_HEADLINE
lab_id = $(firstword $(subst -, ,$(1)))

# the lines: the fixed fields in order, then the captions
field_line = $(if $(strip $(LAB_$(1)_$(3))),$(info $(1)$(tab)$(2)$(tab)$(3)$(tab)$(strip $(LAB_$(1)_$(3)))))
$(foreach d,$(LAB_DIRS),\
  $(foreach f,$(MANIFEST_FIELDS) $(patsubst LAB_$(call lab_id,$(d))_%,%,$(sort $(filter \
    LAB_$(call lab_id,$(d))_CAPTION_%,$(.VARIABLES)))),$(call field_line,$(call lab_id,$(d)),$(d),$(f))))

.PHONY: manifest
manifest:
	@:
