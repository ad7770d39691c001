# ddplab — one non-recursive GNU make build. `make help` lists the targets.
#
# Layout of build outputs (nothing outside build/ is generated, except the
# student skeletons that `make skeletons` writes into labs/):
#   build/lib/libddplab.a           the shared library (CPU + CUDA when nvcc is found)
#   build/labs/labNN                a lab's driver built from the student's files
#   build/solutions/labNN           the same driver built from the reference solution
#   build/{labs,solutions}/labNN-worker   the grader's worker: the test bodies with either
#   build/grader/labNN              the grader's judge: no student code (grader/replay.h)
#   build/tests/unit                Check unit tests of common/
#   build/tests/grader              Check unit tests of the grader (its run plan)
#   build/run, build/grade, build/report  what `make run` writes
#   build/data/fashion-mnist        Fashion-MNIST decompressed, what make's runs read (DL_DATA_DIR)
# SAN=1 builds everything under build/san with ASan+UBSan (and without CUDA);
# NO_CUDA=1 builds a CPU-only kit under build/nocuda; EMU=1 builds the kit for
# the emulated CUDA device under build/emucuda (common/emu/README.md: the .cu
# files through the host C++ compiler, `--device emu`; EMU=1 SAN=1: build/emucuda-san).

.DEFAULT_GOAL := all
SHELL := /bin/bash
.SUFFIXES:
.DELETE_ON_ERROR:

ROOT := $(CURDIR)
# The build says one short line per file ("CC common/src/mlp.c", "LD
# build/labs/lab01"); V=1 shows the whole commands instead.
V ?= 0
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-4s %s\n' $(1) $(2)
endif
SAN ?= 0
# EMU=1: the .cu files are built for the emulated CUDA device, not by nvcc. A build of
# its own: its CUDA backend (the emulator's runtime, cuBLAS and NCCL) has the same
# entry points as a GPU's, so one program holds one or the other.
EMU ?= 0
ifeq ($(EMU),1)
B ?= build/emucuda$(if $(filter 1,$(SAN)),-san)
NO_CUDA := 1
endif
ifeq ($(SAN),1)
B ?= build/san
NO_CUDA := 1
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(NO_CUDA),1)
B ?= build/nocuda
SANFLAGS :=
else
B ?= build
SANFLAGS :=
endif

# Fashion-MNIST as the runs read it fastest: Debian's four .gz files (or those
# of DL_DATA_DIR) decompressed once into build/data/fashion-mnist, the folder
# every run this make starts reads (DL_DATA_DIR, exported; the targets that
# run anything build it first): the same bytes, no inflating in each rank of
# each run. A make inside this one sees the copy as DL_DATA_DIR and its
# source as DL_DATA_GZ. A DL_DATA_DIR of files that are not compressed is
# used as it is. Beside each file of images, its floats as the loader gives
# them (IMAGES.f32.npy, tools/idx2npy): the loader maps that file, shared by
# every rank, instead of converting the bytes in each (common/src/idx.c).
FASHION := $(ROOT)/build/data/fashion-mnist
FASHION_GZ := $(or $(DL_DATA_GZ),$(filter-out $(FASHION),$(DL_DATA_DIR)),/usr/share/datasets/fashion-mnist)
FASHION_FILES := train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte
ifneq ($(wildcard $(FASHION_GZ)/train-images-idx3-ubyte.gz),)
DATA := $(addprefix $(FASHION)/,$(FASHION_FILES) train-images-idx3-ubyte.f32.npy t10k-images-idx3-ubyte.f32.npy)
export DL_DATA_GZ := $(FASHION_GZ)
export DL_DATA_DIR := $(FASHION)
# the copy follows its source: another folder's files are decompressed again, whatever their times
FASHION_STAMP := $(FASHION)/.source
ifneq ($(FASHION_GZ),$(file <$(FASHION_STAMP)))
$(shell mkdir -p $(FASHION))
$(file >$(FASHION_STAMP),$(FASHION_GZ))
endif
$(FASHION)/%: $(FASHION_GZ)/%.gz $(FASHION_STAMP)
	@mkdir -p $(@D)
	$(call say,GZIP,$(patsubst $(ROOT)/%,%,$@))
	$(Q)gzip -dc $< >$@.tmp && mv -f $@.tmp $@
# (the converter is the loader's own files, compiled for it alone: no library,
# no build's flags, so that the data serves every build and `make data-dir`
# builds nothing else)
IDX2NPY_SRC := tools/idx2npy.c $(addprefix common/src/,idx.c npy.c dataset.c status.c fs.c)
$(ROOT)/build/data/idx2npy: $(IDX2NPY_SRC) $(wildcard common/include/dl/*.h)
	$(call say,LD,$(patsubst $(ROOT)/%,%,$@))
	$(Q)$(CC) -std=c11 -O2 -Icommon/include $(IDX2NPY_SRC) -lz -o $@
$(FASHION)/%-images-idx3-ubyte.f32.npy: $(FASHION)/%-images-idx3-ubyte $(FASHION)/%-labels-idx1-ubyte \
                                        | $(ROOT)/build/data/idx2npy
	$(call say,NPY,$(patsubst $(ROOT)/%,%,$@))
	$(Q)rm -f $@ && $(ROOT)/build/data/idx2npy $^ $@
endif

CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
OPT ?= -O2
# -fopenmp-simd: the kit's element-wise loops marked `omp simd` are vectorized
# (no OpenMP runtime is linked; elsewhere the flag changes nothing)
CFLAGS_BASE := -std=c11 $(OPT) -fopenmp-simd -g -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers \
               -Icommon/include $(SANFLAGS)
# fp16 <-> fp32 in one instruction (F16C, x86 since 2012) where the building CPU
# has it — the kit runs where it is built; otherwise the compiler's software
# conversion. Both round to nearest even and keep subnormals: the same bits
# (common/tests/test_half.c checks all 65536 values against a reference).
F16C_FLAGS ?= $(shell grep -qw f16c /proc/cpuinfo 2>/dev/null && echo -mf16c)
CFLAGS_BASE += $(F16C_FLAGS)
# Student files: a skeleton leaves parameters unused until the task is done.
STUDENT_CFLAGS := -Wno-unused-parameter -Wno-unused-variable -Wno-unused-function \
                  -Wno-unused-but-set-variable
LDLIBS_BASE := -lz -lm -lpthread -ldl
# OpenBLAS is opened at run time, not linked (common/src/blas_cpu.c says why),
# by the name its library gives itself
OPENBLAS_SO := $(or $(shell objdump -p $(shell $(CC) -print-file-name=libopenblas.so) 2>/dev/null | \
                 sed -n 's/^ *SONAME *//p'),libopenblas.so.0)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(or $(shell pkg-config --libs check 2>/dev/null),-lcheck -lsubunit -lrt -lm -pthread)

# ---- the emulated CUDA device (common/emu/README.md): cu2cc, libcudaemu.a, `make emu-test` ----
include common/emu/emu.mk

# ---- optional parts: CUDA (cuBLAS, NCCL), MPI, gnuplot ----
ifneq ($(NO_CUDA),1)
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
endif
CUDA_ARCH ?= 86 90
ifeq ($(EMU),1)
# The emulated device: every .cu file (the kit's, a lab's kit_cuda.cu, the student's) goes through
# $(call emu_cu,...) below instead of nvcc; cuBLAS and NCCL are the emulator's.
override NVCC :=
HAVE_CUDA := 1
HAVE_NCCL := 1
CFLAGS_BASE += -DDL_HAVE_CUDA -DDL_HAVE_NCCL -DDL_CUDA_EMU
# the .cu files' flags besides the emulator's C++ (emu.mk's EMU_CXXFLAGS): the kit's defines, F16C as
# the C side has it
EMU_CU_FLAGS = $(F16C_FLAGS) -Icommon/include -DDL_HAVE_CUDA -DDL_HAVE_NCCL -DDL_CUDA_EMU
LDLIBS_CUDA := $(EMU_LIB) $(EMU_LDLIBS)
# the GPU tier's checks of the kit's kernels under checked launches (emu/emu.h)
TESTS_GPU_CFLAGS := -I$(EMU_DIR)/include
# what tools/check-submission.sh needs to judge a .cu file built for the emulated device
CHECK_SUB_ENV := EMU_INCLUDE='$(EMU_DIR)/include' EMU_LIB='$(EMU_LIB)'
else ifneq ($(strip $(NVCC)),)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
HAVE_CUDA := 1
HAVE_NCCL := $(if $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h),1,)
# machine code for each CUDA_ARCH, and PTX of the newest for GPUs after it (the driver compiles it at load)
NVCC_FLAGS = -O2 -g -std=c++17 $(foreach a,$(CUDA_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
              -gencode arch=compute_$(lastword $(CUDA_ARCH)),code=compute_$(lastword $(CUDA_ARCH)) \
              -Xcompiler -Wall -Icommon/include -DDL_HAVE_CUDA $(if $(HAVE_NCCL),-DDL_HAVE_NCCL)
CUDA_LIBDIR := $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib))
# cuBLAS is opened on first use (common/src/cuda/device_cuda.cu), by the name
# its library gives itself; linked only where other code calls it (--as-needed)
CUBLAS_SO := $(or $(shell objdump -p $(CUDA_LIBDIR)/libcublas.so 2>/dev/null | sed -n 's/^ *SONAME *//p'),libcublas.so)
NVCC_FLAGS += -DDL_CUBLAS_SO='"$(CUBLAS_SO)"'
LDLIBS_CUDA := -L$(CUDA_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR) -Wl,--push-state,--as-needed -lcublas -Wl,--pop-state -lcudart \
               $(if $(HAVE_NCCL),-lnccl) -lstdc++ -ldl -lrt
CFLAGS_BASE += -DDL_HAVE_CUDA $(if $(HAVE_NCCL),-DDL_HAVE_NCCL)
else
HAVE_CUDA :=
HAVE_NCCL :=
LDLIBS_CUDA :=
endif
MPICC := $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS := $(shell $(MPICC) --showme:link 2>/dev/null)
CFLAGS_BASE += -DDL_HAVE_MPI
endif
GNUPLOT := $(shell command -v gnuplot 2>/dev/null)
# gold, where the compiler has it (binutils ships it), links the same programs
# in a third of the default linker's time: make test links hundreds (every
# mutant's, hostile submission's and gradebook's). LD_FAST= keeps the default.
LD_FAST ?= $(shell $(CC) -fuse-ld=gold -Wl,--version 2>/dev/null | grep -q '^GNU gold' && echo -fuse-ld=gold)
LDLIBS := $(LD_FAST) $(LDLIBS_BASE) $(MPI_LIBS) $(LDLIBS_CUDA) $(SANFLAGS)

# ---- objects follow the flags ----
# Every object depends on $(B)/.flags, which holds the compile flags of the
# last build here and is rewritten only when they change: a new flag (-mf16c,
# a CUDA toolkit or MPI appearing) rebuilds the objects instead of linking
# ones built the old way (make alone compares only file times).
FLAGS_STAMP := $(B)/.flags
FLAGS_NOW := CC=$(CC) BLAS=$(OPENBLAS_SO) CFLAGS=$(CFLAGS_BASE) STUDENT=$(STUDENT_CFLAGS) NVCC=$(NVCC) $(NVCC_FLAGS) \
             MPI=$(MPI_CFLAGS) CHECK=$(CHECK_CFLAGS)
ifeq ($(EMU),1)
FLAGS_NOW += EMU=$(EMU_CXXFLAGS) $(EMU_CU_FLAGS) RT=$(EMU_RT_CXXFLAGS) CXX=$(CXX)
endif
ifneq ($(FLAGS_NOW),$(file <$(FLAGS_STAMP)))
$(shell mkdir -p $(B))
$(file >$(FLAGS_STAMP),$(FLAGS_NOW))
endif
$(FLAGS_STAMP):
	@mkdir -p $(@D)
	@touch $@
ifeq ($(EMU),1)
$(EMU_RT_OBJ) $(EMU_CU2CC): $(FLAGS_STAMP) # (the emulator's runtime follows the flags too)
endif
# The kit's path is compiled into the three objects that need it (dl_home's
# default, the tree the sandbox hides, and their test) and kept apart in
# $(B)/.root: a tree copied elsewhere with its build (a scratch copy of the kit,
# a release) rebuilds those three and relinks, instead of compiling everything.
ROOT_STAMP := $(B)/.root
ifneq ($(ROOT),$(file <$(ROOT_STAMP)))
$(shell mkdir -p $(B))
$(file >$(ROOT_STAMP),$(ROOT))
endif
$(ROOT_STAMP):
	@mkdir -p $(@D)
	@touch $@
ROOT_OBJS := $(B)/obj/common/fs.o $(B)/obj/grader/sandbox.o $(B)/obj/tests/test_fs.o
$(ROOT_OBJS): CFLAGS_BASE += -DDL_SOURCE_DIR='"$(ROOT)"'
$(ROOT_OBJS): $(ROOT_STAMP)

# ---- the library ----
# LIB_PREBUILT=path links an already built library instead (the gradebook builds
# each submission in a fresh tree against the instructor's library).
ifneq ($(LIB_PREBUILT),)
LIB := $(LIB_PREBUILT)
else
LIB := $(B)/lib/libddplab.a
endif
LIB_C := $(filter-out common/src/cuda_stub.c common/src/nccl_stub.c common/src/mpi_stub.c common/src/comm_mpi.c,\
                      $(wildcard common/src/*.c))
ifeq ($(HAVE_CUDA),1)
LIB_CU := $(filter-out $(if $(HAVE_NCCL),,common/src/cuda/comm_nccl.cu),$(wildcard common/src/cuda/*.cu))
else
LIB_C += common/src/cuda_stub.c
LIB_CU :=
endif
ifneq ($(HAVE_NCCL),1)
LIB_C += common/src/nccl_stub.c
endif
# dl_comm's MPI transport, or its stub (see common/src/comm_backend.h)
LIB_C += $(if $(MPICC),common/src/comm_mpi.c,common/src/mpi_stub.c)
LIB_OBJ := $(patsubst common/src/%.c,$(B)/obj/common/%.o,$(LIB_C)) \
           $(patsubst common/src/cuda/%.cu,$(B)/obj/common/cuda/%.o,$(LIB_CU))
# A release where a lab is open holds the lab's kit answers (LAB_NN_KIT_ANSWERS: library
# files whose code answers one of its tasks, such as lab 03's sampler.c, which lab 05's
# driver calls) as objects, common/prebuilt/NAME.o, not as source (tools/release-tree.sh;
# they are built as the judge's answers are, below): where only the object is, the
# library takes it as it is.
KIT_PREBUILT := $(filter-out $(patsubst common/src/%.c,common/prebuilt/%.o,$(wildcard common/src/*.c)),\
                  $(wildcard common/prebuilt/*.o))
LIB_OBJ += $(KIT_PREBUILT)

$(B)/obj/common/%.o: common/src/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_BASE) $(OBJ_CFLAGS) -Icommon/src -MMD -MP -c $< -o $@
$(B)/obj/common/comm_mpi.o: OBJ_CFLAGS := $(MPI_CFLAGS)
$(B)/obj/common/blas_cpu.o: OBJ_CFLAGS := -DDL_OPENBLAS_SO='"$(OPENBLAS_SO)"'

ifeq ($(EMU),1)
# (the kit's own .cu files: warnings are errors, as the C sources' are)
$(B)/obj/common/cuda/%.o: common/src/cuda/%.cu $(FLAGS_STAMP) $(EMU_CU2CC)
	$(call emu_cu,$<,$@,$(EMU_CU_FLAGS) -Wextra -Werror -Icommon/src)
else
$(B)/obj/common/cuda/%.o: common/src/cuda/%.cu $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,NVCC,$<)
	$(Q)$(NVCC) $(NVCC_FLAGS) -Icommon/src -MMD -MP -c $< -o $@
endif

# (EMU=1: the emulator's runtime, libcudaemu.a, is linked beside the library as LDLIBS_CUDA, as
# libcudart is; a new one re-archives the library, so that everything linked with it relinks)
ifeq ($(LIB_PREBUILT),)
$(LIB): $(LIB_OBJ) $(if $(filter 1,$(EMU)),$(EMU_LIB))
	@mkdir -p $(@D)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $(filter %.o,$^)
endif

# ---- tools: the skeleton generator and the report builder ----
$(B)/tools/%: tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS_BASE) -MMD -MP $< $(LIB) $(LDLIBS) -o $@

TOOLS := $(B)/tools/skelgen $(B)/tools/report $(B)/tools/jsonq

# ---- labs ----
# Each lab folder has a lab.mk naming its files:
#   LAB_<id>_STUDENT_C / _CU / _H   student-editable files (solutions/ holds the references)
#   LAB_<id>_KIT_C                  kit code shared by driver and grader (not student-editable)
#   LAB_<id>_KIT_CU                 the same in CUDA (built when nvcc is found; kit.c stands in without it)
#   LAB_<id>_DRIVER_C               the driver's files beside main.c (the grader does not link them)
#   LAB_<id>_KIT_ANSWERS            kit files (common/...) whose code answers this lab's tasks: a student
#                                   release staged for this lab or an earlier one leaves them out
#   LAB_<id>_JUDGE_ANSWERS          grader files of this lab whose code answers a task: no release holds
#                                   their source, every one holds their object (grader/prebuilt/, below)
# The other fields (the title, make run's flags, the report's headline...) and
# the whole list: tools/manifest.mk. Scripts read a manifest through
# tools/lab.sh (make's reading of it), never by hand; `make -s print-VAR`
# prints any variable of this Makefile.
LABS := $(patsubst labs/%/lab.mk,%,$(sort $(wildcard labs/*/lab.mk)))
include $(wildcard labs/*/lab.mk)
lab_id = $(firstword $(subst -, ,$(1)))
lab_dir = $(filter $(1)-%,$(LABS))

# What a student's object may be made of (tools/check-submission.sh; the
# README's instructor section): every build of student files below checks
# the files the preprocessor read and the assembly the compiler made before
# assembling, then the object's symbols, against the lab's rules, derived
# once per lab into $(B)/api/labNN.rules from grader/api/{kit,labNN}.txt,
# the headers and the kit's objects. A refusal fails that build.
CHECK_SUB := bash tools/check-submission.sh
API_CPPFLAGS := $(filter -D%,$(CFLAGS_BASE))
lab_rules = $(B)/api/lab$(1).rules

# $(call student_objs,lab-id,impl-name)
student_objs = $(patsubst %.c,$(B)/obj/$(2)/$(1)/%.o,$(LAB_$(1)_STUDENT_C)) \
               $(if $(HAVE_CUDA),$(patsubst %.cu,$(B)/obj/$(2)/$(1)/%.o,$(LAB_$(1)_STUDENT_CU)))
driver_objs = $(patsubst %.c,$(B)/obj/kit/$(1)/%.o,main.c $(LAB_$(1)_DRIVER_C))
kit_objs = $(patsubst %.c,$(B)/obj/kit/$(1)/%.o,$(LAB_$(1)_KIT_C)) \
           $(if $(HAVE_CUDA),$(patsubst %.cu,$(B)/obj/kit/$(1)/%.o,$(LAB_$(1)_KIT_CU)))

# Rules that do not depend on the implementation: kit code, the lab's grader
# suite (grader/labNN.c, the items and their table, and grader/labNN_*.c, its
# references, readers and further items), its call wrappers (grader/labNN_calls.c, compiled once for the judge
# and once, -DGR_RECORD, for the worker) and the judge, build/grader/labNN,
# which holds no student code (see grader/replay.h).
# The functions to wrap are the __wrap_NAME the call-wrapper object defines
# (read when the link runs, after the object is built).
lab_wrap = $(shell nm $(B)/obj/grader/lab$(1)_calls-judge.o 2>/dev/null | sed -n 's/.* T __wrap_//p')
wrap_flags = $(foreach f,$(call lab_wrap,$(1)),-Wl,--wrap=$(f))
# The objects of a lab's grader suite: grader/labNN.c and grader/labNN_*.c but the call wrappers,
# and the lab's judge answers (LAB_NN_JUDGE_ANSWERS), whose source a student release lacks.
lab_grader_objs = $(patsubst grader/%.c,$(B)/obj/grader/%.o,$(sort grader/lab$(1).c \
                    $(filter-out grader/lab$(1)_calls.c,$(wildcard grader/lab$(1)_*.c)) $(LAB_$(1)_JUDGE_ANSWERS)))
# A lab's judge answers (LAB_NN_JUDGE_ANSWERS: grader files whose code answers a task, such as
# lab01_ref.c's double-precision scaler) never ship as source: tools/release-tree.sh puts
# their objects in a release instead, as grader/prebuilt/NAME.o, built here by
# $(B)/prebuilt/grader/NAME.o. Where the source is (this kit), the build compiles it;
# where only the object is (a release), it copies that object to where the source's
# would be, and every link below is the same. One object serves every build a release
# does (make grade with or without CUDA, MPI, SAN=1 or EMU=1, the gradebook, Gradescope's
# NO_CUDA=1): it is compiled without the flags that differ between them (-DDL_HAVE_*,
# -DDL_CUDA_EMU, the sanitizers, -mf16c: an object that runs on any x86-64) and without
# debug information or local symbols, after checking that its source reads the same to
# the preprocessor with and without each of those flags (the code does not depend on them;
# a sanitizer build links an uninstrumented object as it links libc). Each object is
# written whole and renamed into place: releases laid out side by side may build it at once.
PREBUILT_BASE_CFLAGS := $(filter-out -g $(SANFLAGS) $(F16C_FLAGS) -DDL_HAVE_% -DDL_CUDA_EMU,$(CFLAGS_BASE))
PREBUILT_CFLAGS := $(PREBUILT_BASE_CFLAGS) $(CHECK_CFLAGS) -Igrader
PREBUILT_VARIANTS := "-DDL_HAVE_CUDA -DDL_HAVE_NCCL -DDL_HAVE_MPI" "-fsanitize=address,undefined" \
                     $(if $(F16C_FLAGS),"$(F16C_FLAGS)") $(if $(filter 1,$(EMU)),"-DDL_CUDA_EMU")
# $(call prebuilt_cc,flags): the recipe of a prebuilt object, $@ from $<
define prebuilt_cc
@mkdir -p $(@D)
$(call say,CC,$@)
$(Q)for v in $(PREBUILT_VARIANTS); do cmp -s <($(CC) $(1) -E $<) <($(CC) $(1) $$v -E $<) || \
    { echo "$<: reads otherwise with $$v: a prebuilt object would not serve that build (see PREBUILT_CFLAGS)" >&2; \
    exit 1; }; done
$(Q)t=$@.$$$$; $(CC) $(1) -MMD -MP -MT $@ -MF $@.d -c $< -o $$t.o && objcopy --strip-debug --discard-all $$t.o $$t && mv -f $$t $@; \
    rc=$$?; rm -f $$t.o $$t; exit $$rc
endef
judge_prebuilt = $(patsubst grader/%.c,$(B)/prebuilt/grader/%.o,$(LAB_$(1)_JUDGE_ANSWERS))
# the kit answers' objects (the library's files among LAB_NN_KIT_ANSWERS; a release leaves the
# other files out where the lab is open: tools/release-tree.sh)
KIT_ANSWERS_PREBUILT := $(patsubst common/src/%.c,$(B)/prebuilt/common/%.o,$(filter common/src/%.c,\
                          $(foreach l,$(LABS),$(LAB_$(call lab_id,$(l))_KIT_ANSWERS))))
$(KIT_ANSWERS_PREBUILT): $(B)/prebuilt/common/%.o: common/src/%.c $(FLAGS_STAMP)
	$(call prebuilt_cc,$(PREBUILT_BASE_CFLAGS) -Icommon/src)
# the lab's grader objects compiled here, and those copied from grader/prebuilt/ (no source)
grader_from_prebuilt = $(patsubst grader/%.c,$(B)/obj/grader/%.o,$(filter-out $(wildcard $(LAB_$(1)_JUDGE_ANSWERS)),\
                         $(LAB_$(1)_JUDGE_ANSWERS)))
grader_from_source = $(filter-out $(call grader_from_prebuilt,$(1)),$(call lab_grader_objs,$(1)))
GRADER_JUDGE_OBJ := $(B)/obj/grader/runner.o $(B)/obj/grader/items.o $(B)/obj/grader/sandbox.o \
                    $(B)/obj/grader/replay.o $(B)/obj/grader/drivers.o $(B)/obj/grader/plan.o $(B)/obj/grader/gpu.o
GRADER_WORKER_OBJ := $(B)/obj/grader/worker.o $(B)/obj/grader/items.o $(B)/obj/grader/replay.o \
                     $(B)/obj/grader/sandbox.o $(B)/obj/grader/drivers.o $(B)/obj/grader/gpu.o
# A lab's .cu files: $(call LAB_KIT_CU,lab-id,lab-dir) for its kit_cuda.cu,
# $(call LAB_STUDENT_CU,lab-id,lab-dir,impl-name,impl-source-dir,obj-root) for
# the student's, built by nvcc or, EMU=1, for the emulated device.
ifeq ($(EMU),1)
define LAB_KIT_CU
$(B)/obj/kit/$(1)/%.o: labs/$(2)/%.cu $(FLAGS_STAMP) $(EMU_CU2CC)
	$$(call emu_cu,$$<,$$@,$$(EMU_CU_FLAGS) -Ilabs/$(2))
endef
# A student's .cu file for the emulated device, checked as nvcc's is: the line rule on the
# files, then cu2cc rewrites its launches and __shared__ within their lines, the compiler
# makes the assembly that is checked and then assembled, and the object is checked. The
# dependency file names the .cu file where it named cu2cc's output (which holds the .cu
# file's lines and includes, and nothing else of its own).
define LAB_STUDENT_CU
$(5)/obj/$(3)/$(1)/%.o: $(4)/%.cu $(addprefix $(4)/,$(LAB_$(1)_STUDENT_H)) $(FLAGS_STAMP) $(call lab_rules,$(1)) \
                         $(EMU_CU2CC)
	@mkdir -p $$(@D)
	$$(call say,EMU,$$<)
	$$(Q)$$(CHECK_SUB) lines $(call lab_rules,$(1)) $(4) $$<
	$$(Q)$$(EMU_CU2CC) $$< -o $$(@:.o=.cu.cc)
	$$(Q)$$(CXX) $$(EMU_CXXFLAGS) $$(EMU_CU_FLAGS) $$(STUDENT_CFLAGS) -I$(4) -Ilabs/$(2) -iquote $(4) -MD -MP \
	    -MF $$(@:.o=.d) -MT $$@ -S $$(@:.o=.cu.cc) -o $$(@:.o=.s)
	$$(Q)$$(call EMU_DEP_CU,$$<,$$@)
	$$(Q)$$(CHECK_SUB) source $(call lab_rules,$(1)) $(4) $$< $$(@:.o=.d) $$(@:.o=.s)
	$$(Q)$$(CXX) $$(EMU_CXXFLAGS) -c $$(@:.o=.s) -o $$@
	$$(Q)$$(CHECK_SUB) symbols $(call lab_rules,$(1)) $$< $$@
endef
else
define LAB_KIT_CU
$(B)/obj/kit/$(1)/%.o: labs/$(2)/%.cu $(FLAGS_STAMP)
	@mkdir -p $$(@D)
	$$(call say,NVCC,$$<)
	$$(Q)$$(NVCC) $$(NVCC_FLAGS) -Ilabs/$(2) -MMD -MP -c $$< -o $$@
endef
define LAB_STUDENT_CU
$(5)/obj/$(3)/$(1)/%.o: $(4)/%.cu $(addprefix $(4)/,$(LAB_$(1)_STUDENT_H)) $(FLAGS_STAMP) $(call lab_rules,$(1))
	@mkdir -p $$(@D)
	$$(call say,NVCC,$$<)
	$$(Q)$$(CHECK_SUB) lines $(call lab_rules,$(1)) $(4) $$<
	$$(Q)$$(NVCC) $$(NVCC_FLAGS) -I$(4) -Ilabs/$(2) -MD -MP -MF $$(@:.o=.d) -Xcompiler -save-temps=obj -c $$< -o $$@
	$$(Q)rm -f $$(@:.o=.ii)
	$$(Q)$$(CHECK_SUB) source $(call lab_rules,$(1)) $(4) $$< $$(@:.o=.d) $$(@:.o=.s)
	$$(Q)$$(CHECK_SUB) symbols $(call lab_rules,$(1)) $$< $$@
endef
endif
define LAB_COMMON
$(B)/obj/kit/$(1)/%.o: labs/$(2)/%.c $(FLAGS_STAMP)
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)
	$$(Q)$$(CC) $$(CFLAGS_BASE) -Ilabs/$(2) -MMD -MP -c $$< -o $$@
$(call LAB_KIT_CU,$(1),$(2))
$(call grader_from_source,$(1)): $(B)/obj/grader/%.o: grader/%.c
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)
	$$(Q)$$(CC) $$(CFLAGS_BASE) $$(CHECK_CFLAGS) -Igrader -Ilabs/$(2) -MMD -MP -c $$< -o $$@
$(call grader_from_prebuilt,$(1)): $(B)/obj/grader/%.o: grader/prebuilt/%.o
	@mkdir -p $$(@D)
	$$(call say,CP,$$<)
	$$(Q)cp $$< $$@
$(call judge_prebuilt,$(1)): $(B)/prebuilt/grader/%.o: grader/%.c $(FLAGS_STAMP)
	$$(call prebuilt_cc,$$(PREBUILT_CFLAGS) -Ilabs/$(2))
$(B)/obj/grader/lab$(1)_calls-judge.o: grader/lab$(1)_calls.c
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)
	$$(Q)$$(CC) $$(CFLAGS_BASE) $$(CHECK_CFLAGS) -Igrader -Ilabs/$(2) -MMD -MP -c $$< -o $$@
$(B)/obj/grader/lab$(1)_calls-record.o: grader/lab$(1)_calls.c
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)
	$$(Q)$$(CC) $$(CFLAGS_BASE) $$(CHECK_CFLAGS) -DGR_RECORD -Igrader -Ilabs/$(2) -MMD -MP -c $$< -o $$@
$(call lab_rules,$(1)): grader/api/kit.txt grader/api/lab$(1).txt tools/check-submission.sh \
                        $(wildcard common/include/dl/*.h labs/$(2)/*.h) $(call kit_objs,$(1)) $(LIB)
	@mkdir -p $$(@D)
	$$(call say,API,$$@)
	$$(Q)CC='$$(CC)' NVCC='$$(NVCC)' CUDA_LIBDIR='$$(CUDA_LIBDIR)' SAN=$$(SAN) $$(CHECK_SUB_ENV) $$(CHECK_SUB) rules $$@ labs/$(2) \
	    $$(LIB) "$$(LAB_$(1)_STUDENT_C) $$(LAB_$(1)_STUDENT_CU) $$(LAB_$(1)_STUDENT_H)" $(call kit_objs,$(1)) \
	    -- $$(API_CPPFLAGS)
$(B)/grader/lab$(1): $(GRADER_JUDGE_OBJ) $(call lab_grader_objs,$(1)) $(B)/obj/grader/lab$(1)_calls-judge.o \
                     $(call kit_objs,$(1)) $(LIB)
	@mkdir -p $$(@D)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(SANFLAGS) $$(call wrap_flags,$(1)) $$^ $$(LDLIBS) $$(CHECK_LIBS) -o $$@
endef

# $(call LAB_IMPL,lab-id,lab-dir,impl-name,impl-source-dir,obj-root): the driver
# and the grader's worker, built from the student files found in impl-source-dir.
define LAB_IMPL
$(5)/obj/$(3)/$(1)/%.o: $(4)/%.c $(addprefix $(4)/,$(LAB_$(1)_STUDENT_H)) $(FLAGS_STAMP) $(call lab_rules,$(1))
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)
	$$(Q)$$(CHECK_SUB) lines $(call lab_rules,$(1)) $(4) $$<
	$$(Q)$$(CC) $$(CFLAGS_BASE) $$(STUDENT_CFLAGS) -I$(4) -Ilabs/$(2) -MD -MP -MF $$(@:.o=.d) -MT $$@ -S $$< \
	    -o $$(@:.o=.s)
	$$(Q)$$(CHECK_SUB) source $(call lab_rules,$(1)) $(4) $$< $$(@:.o=.d) $$(@:.o=.s)
	$$(Q)$$(CC) -c $$(@:.o=.s) -o $$@
	$$(Q)$$(CHECK_SUB) symbols $(call lab_rules,$(1)) $$< $$@
$(call LAB_STUDENT_CU,$(1),$(2),$(3),$(4),$(5))
$(5)/$(3)/lab$(1): $(call driver_objs,$(1)) $(call kit_objs,$(1)) $(subst $(B)/obj,$(5)/obj,$(call student_objs,$(1),$(3))) $(LIB)
	@mkdir -p $$(@D)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(SANFLAGS) $$^ $$(LDLIBS) -o $$@
$(5)/$(3)/lab$(1)-worker: | $(B)/obj/grader/lab$(1)_calls-judge.o
$(5)/$(3)/lab$(1)-worker: $(GRADER_WORKER_OBJ) $(call lab_grader_objs,$(1)) $(B)/obj/grader/lab$(1)_calls-record.o \
                          $(call kit_objs,$(1)) $(subst $(B)/obj,$(5)/obj,$(call student_objs,$(1),$(3))) $(LIB)
	@mkdir -p $$(@D)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(SANFLAGS) $$(call wrap_flags,$(1)) $$^ $$(LDLIBS) $$(CHECK_LIBS) -o $$@
endef

$(foreach l,$(LABS),$(eval $(call LAB_COMMON,$(call lab_id,$(l)),$(l))))
$(foreach l,$(LABS),$(eval $(call LAB_IMPL,$(call lab_id,$(l)),$(l),labs,labs/$(l),$(B))))
# A student release has no solutions/: then only the student's builds exist.
SOL_LABS := $(foreach l,$(LABS),$(if $(wildcard solutions/$(l)/*),$(l)))
$(foreach l,$(SOL_LABS),$(eval $(call LAB_IMPL,$(call lab_id,$(l)),$(l),solutions,solutions/$(l),$(B))))

# Benchmarks: grader/bench/labNN.c linked with the reference solution.
define LAB_BENCH
$(B)/obj/bench/lab$(1).o: grader/bench/lab$(1).c
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)
	$$(Q)$$(CC) $$(CFLAGS_BASE) -Ilabs/$(2) -MMD -MP -c $$< -o $$@
$(B)/bench/lab$(1): $(B)/obj/bench/lab$(1).o $(call kit_objs,$(1)) $(call student_objs,$(1),solutions) $(LIB)
	@mkdir -p $$(@D)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(SANFLAGS) $$^ $$(LDLIBS) -o $$@
endef
BENCH_LABS := $(foreach l,$(SOL_LABS),$(if $(wildcard grader/bench/lab$(call lab_id,$(l)).c),$(l)))
$(foreach l,$(BENCH_LABS),$(eval $(call LAB_BENCH,$(call lab_id,$(l)),$(l))))
# (a student release has no grader/bench/: no benchmark there)
BENCHES := $(foreach l,$(BENCH_LABS),$(B)/bench/lab$(call lab_id,$(l))) $(if $(wildcard grader/bench/step.c),$(B)/bench/step)
# the kit's MLP step alone, phase by phase (tools/bench-cpu.sh sets it beside PyTorch's)
$(B)/obj/bench/step.o: grader/bench/step.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_BASE) -MMD -MP -c $< -o $@
$(B)/bench/step: $(B)/obj/bench/step.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $^ $(LDLIBS) -o $@

# A mutant: `make mutant-grader LAB=01 MUT_DIR=dir MUT_B=objroot` builds
# MUT_B/mutant/labNN and MUT_B/mutant/labNN-worker from the student files in
# MUT_DIR; the judge build/grader/labNN --code MUT_B/mutant grades them.
ifneq ($(MUT_DIR),)
$(eval $(call LAB_IMPL,$(LAB),$(call lab_dir,$(LAB)),mutant,$(MUT_DIR),$(MUT_B)))
mutant-grader: $(MUT_B)/mutant/lab$(LAB)-worker $(MUT_B)/mutant/lab$(LAB) $(B)/grader/lab$(LAB)
mutant-driver: $(MUT_B)/mutant/lab$(LAB)
endif

# (EMU=1: the gpu1 tier's helpers, grader/gpu.c, reach the emulator's controls, emu/emu.h)
$(B)/obj/grader/%.o: grader/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_BASE) $(CHECK_CFLAGS) -Igrader $(if $(filter 1,$(EMU)),-I$(EMU_DIR)/include) -MMD -MP -c $< -o $@

DRIVERS := $(foreach l,$(LABS),$(B)/labs/lab$(call lab_id,$(l))) \
           $(foreach l,$(SOL_LABS),$(B)/solutions/lab$(call lab_id,$(l)))
GRADERS := $(foreach l,$(LABS),$(B)/grader/lab$(call lab_id,$(l)) $(B)/labs/lab$(call lab_id,$(l))-worker) \
           $(foreach l,$(SOL_LABS),$(B)/solutions/lab$(call lab_id,$(l))-worker)

# ---- unit tests of common/ ----
TEST_C := $(wildcard common/tests/*.c)
TEST_OBJ := $(patsubst common/tests/%.c,$(B)/obj/tests/%.o,$(TEST_C))
$(B)/obj/tests/%.o: common/tests/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_BASE) $(CHECK_CFLAGS) -Icommon/src -MMD -MP -c $< -o $@
$(B)/tests/unit: $(TEST_OBJ) $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $^ $(LDLIBS) $(CHECK_LIBS) -o $@

# The grader's own unit tests (its run plan: grader/plan.h), run by `make unit` too.
GRADER_TEST_C := $(wildcard grader/tests/*.c)
$(B)/obj/grader_tests/%.o: grader/tests/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_BASE) $(CHECK_CFLAGS) -Igrader -MMD -MP -c $< -o $@
$(B)/tests/grader: $(patsubst grader/tests/%.c,$(B)/obj/grader_tests/%.o,$(GRADER_TEST_C)) $(B)/obj/grader/plan.o
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $^ $(CHECK_LIBS) -o $@

# GPU checks of common/ (CUDA vs CPU), run by `make test-gpu` where a GPU exists.
GPU_TEST_C := $(wildcard common/tests_gpu/*.c)
$(B)/obj/tests_gpu/%.o: common/tests_gpu/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_BASE) $(CHECK_CFLAGS) $(TESTS_GPU_CFLAGS) -MMD -MP -c $< -o $@
$(B)/tests/gpu: $(patsubst common/tests_gpu/%.c,$(B)/obj/tests_gpu/%.o,$(GPU_TEST_C)) $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $^ $(LDLIBS) $(CHECK_LIBS) -o $@

# dl_comm under mpirun (tools/test-comm.sh starts it with 1..4 ranks).
$(B)/obj/tests_mpi/%.o: common/tests_mpi/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_BASE) -MMD -MP -c $< -o $@
$(B)/tests/comm: $(B)/obj/tests_mpi/test_comm.o $(LIB)
	@mkdir -p $(@D)
	$(call say,LD,$@)
	$(Q)$(CC) $(SANFLAGS) $^ $(LDLIBS) -o $@

-include $(shell find $(B)/obj $(B)/prebuilt -name '*.d' 2>/dev/null)

# ---- top-level targets ----
.PHONY: all autograder help deps features lib run print-B test unit grade bench bench-gpu skeletons check-skeletons \
        test-gpu test-gpu-emu slides style clean mutants plots student-release gradescope gradebook mutant-grader data-dir \
        mutant-driver

help:
	@echo "ddplab — make targets"
ifneq ($(SOL_LABS),)
	@echo "  make run              run every lab's reference on its default data, grade it, write build/report/index.html"
	@echo "                        (tools/run.sh --impl labs: your code in labs/ instead)"
else
	@echo "  make run              build and run your code in each lab on its default data, grade it,"
	@echo "                        write build/report/index.html (a task not done yet is named, not an error)"
endif
	@echo "  make test             the kit's own tests (unit, grader, skeletons, mutants, drivers, plots)"
	@echo "  make grade LAB=01     grade your code in labs/01-*  (IMPL=solutions grades the reference)"
	@echo "                        TESTS='name ...' reruns chosen items; JSON=file writes Gradescope results"
	@echo "                        SRC=dir grades the lab's student files found in dir instead"
	@echo "  make all              build library, drivers, graders and tests"
	@echo "  make deps             install the Debian/Ubuntu packages the kit needs (apt-get)"
	@echo "  make bench            benchmarks: ratios measured side by side, JSON + plots in build/bench"
	@echo "  make bench-gpu        only the GPU's ratios (where a GPU answers): lab 01's pass, lab 02, lab 05's AMP"
	@echo "  make skeletons        regenerate the student files in labs/ from solutions/"
	@echo "  make test-gpu         the GPU tier (needs a CUDA GPU; one command, under five minutes)"
	@echo "  make slides           build slides/*.md into build/slides/*.html"
	@echo "  make style            clang-format check and cppcheck on the C sources"
	@echo "  make emu-test         the emulated CUDA device's unit tests (common/emu)"
	@echo "  make test-gpu-emu     the GPU tier on the emulated CUDA device, no GPU needed (part of make test)"
	@echo "  make EMU=1 [target]   the kit built for the emulated CUDA device, in build/emucuda: --device emu"
	@echo "  make gradebook SUBMISSIONS=dir LAB=01   grade a folder of submissions into a CSV"
	@echo "  make student-release  the students' tarballs: one staged for each lab, and the whole kit (no solutions/, no mutants)"
	@echo "  make gradescope LAB=01   the Gradescope autograder for a lab (build/gradescope/)"
	@echo "  make autograder       only what grading needs: the library, the judges, jsonq (no drivers, tests, benches)"
	@echo "  make clean            remove build/"
	@echo "options: NO_CUDA=1  SAN=1 (ASan+UBSan)  EMU=1  CUDA_ARCH='86 90'  DL_DEVICE=cpu|cuda|emu"

comma := ,
CUDA_MSG := $(if $(HAVE_CUDA),✓ CUDA    $(NVCC) (sm $(CUDA_ARCH))$(comma) cuBLAS,✗ CUDA    nvcc not found: CPU only (install the CUDA toolkit or set NVCC=))
NCCL_MSG := $(if $(HAVE_NCCL),✓ NCCL    $(CUDA_HOME),✗ NCCL    not found (GPU data parallelism needs it))
MPI_MSG := $(if $(MPICC),✓ MPI     $(MPICC),✗ MPI     mpicc not found (make deps))
ifeq ($(EMU),1)
CUDA_MSG := ✓ CUDA    emulated on the CPU (common/emu): --device emu; this build has no GPU
NCCL_MSG := ✓ NCCL    emulated, its ranks over MPI
endif
GNUPLOT_MSG := $(if $(GNUPLOT),✓ gnuplot $(GNUPLOT),✗ gnuplot not found: CSV only (make deps))
features:
	@echo '$(CUDA_MSG)'
	@echo '$(NCCL_MSG)'
	@echo '$(MPI_MSG)'
	@echo '$(GNUPLOT_MSG)'

deps:
	@bash tools/deps.sh

lib: $(LIB)

all: features $(LIB) $(DRIVERS) $(GRADERS) $(B)/tests/unit $(B)/tests/grader $(B)/tests/gpu $(B)/tests/comm \
     $(BENCHES) $(TOOLS) $(DATA)

# What grading needs and nothing else (a Gradescope image, a grading machine):
# the library, every lab's judge and the JSON reader; a submission's driver and
# worker are built with its files (tools/gradebook.sh).
autograder: features $(LIB) $(foreach l,$(LABS),$(B)/grader/lab$(call lab_id,$(l))) $(B)/tools/jsonq $(DATA)

unit: $(B)/tests/unit $(B)/tests/grader $(DATA)
	$(B)/tests/unit
	$(B)/tests/grader

LAB ?= 01
IMPL ?= labs
# The judge exits 1 when points were lost (0: full marks; 2 or more: it could
# not grade). make grade says so in one line and succeeds, so that make adds
# no error banner that reads as a crash; STRICT=1 passes the 1 on (CI, scripts).
GRADE_RC = rc=$$?; if [ $$rc -eq 1 ] && [ "$(STRICT)" != 1 ]; then \
           echo "make grade: points were lost (exit status 1; STRICT=1 makes that an error)"; else exit $$rc; fi
# The code under test is built first; when it does not build (a compiler
# error, or tools/check-submission.sh refusing it) the judge still writes the
# table and results.json: every item 0, with the reason (--not-built), which
# it reads from the build's log sanitized (grader/plan.h). The build's own
# output is shown with "  build| " before each line: a compiler prints what
# a student's file makes it print (a #pragma GCC error or a #line file name
# holding newlines: a forged "Score:" or "refused [...]" line), and none of it
# may read as the judge's.
GRADE_SHOW = sed -u 's/^/  build| /'
GRADE_JUDGE = $(B)/grader/lab$(LAB) $(if $(JSON),--json $(JSON)) $(TESTS)
# Task 5's CUDA items without a GPU: when the judge says they would run on the emulated device
# (--which-cuda: no GPU answers, or GR_CUDA=emu; labs 01 and 02), the code under test is built
# for it too, beside the kit's emulated build in $(B)/emucuda ($(GRADE_EMU_B)), with that
# build's judge, which grades those items for the judge (grader/gpu.h); $$emu holds the
# judge's flags. Its build's output is shown as the other build's is.
GRADE_EMU_B := $(B)/emucuda
# $(call GRADE_EMU,targets,log,code-dir)
GRADE_EMU = emu=; if [ "$$($(B)/grader/lab$(LAB) --which-cuda)" = emu ]; then \
	    if $(MAKE) --no-print-directory EMU=1 B=$(GRADE_EMU_B) $(GRADE_EMU_B)/grader/lab$(LAB) $(1) 2>&1 | \
	    tee $(2) | $(GRADE_SHOW); then emu="--emu-code $(3)"; else emu="--emu-not-built $(2)"; fi; fi
ifeq ($(SRC),)
grade: $(B)/grader/lab$(LAB) $(DATA)
	@mkdir -p $(B)/grade-build
	@set -o pipefail; if $(MAKE) --no-print-directory $(B)/$(IMPL)/lab$(LAB)-worker $(B)/$(IMPL)/lab$(LAB) 2>&1 | \
	    tee $(B)/grade-build/lab$(LAB)-$(IMPL).log | $(GRADE_SHOW); then \
	    $(call GRADE_EMU,$(GRADE_EMU_B)/$(IMPL)/lab$(LAB)-worker,$(B)/grade-build/lab$(LAB)-$(IMPL)-emu.log,\
	    $(GRADE_EMU_B)/$(IMPL)); $(GRADE_JUDGE) --impl $(IMPL) $$emu || { $(GRADE_RC); }; \
	else $(GRADE_JUDGE) --impl $(IMPL) --not-built $(B)/grade-build/lab$(LAB)-$(IMPL).log || { $(GRADE_RC); }; fi
else
# make grade LAB=01 SRC=dir: the lab's student files from dir (one submission, by hand)
GRADE_SRC_B = $(B)/grade-src/$(subst /,_,$(abspath $(SRC)))
grade: $(B)/grader/lab$(LAB) $(DATA)
	@mkdir -p $(GRADE_SRC_B)
	@set -o pipefail; if $(MAKE) --no-print-directory -s mutant-grader LAB=$(LAB) MUT_DIR=$(abspath $(SRC)) \
	    MUT_B=$(GRADE_SRC_B) 2>&1 | tee $(GRADE_SRC_B)/build.log | $(GRADE_SHOW); then \
	    $(call GRADE_EMU,-s mutant-grader LAB=$(LAB) MUT_DIR=$(abspath $(SRC)) MUT_B=$(GRADE_SRC_B)/emu,\
	    $(GRADE_SRC_B)/build-emu.log,$(GRADE_SRC_B)/emu/mutant); \
	    $(GRADE_JUDGE) --code $(GRADE_SRC_B)/mutant --impl $(SRC) $$emu || { $(GRADE_RC); }; \
	else $(GRADE_JUDGE) --impl $(SRC) --not-built $(GRADE_SRC_B)/build.log || { $(GRADE_RC); }; fi
endif

# In the full kit make run runs the references, built by `all`; in a student
# release (no solutions/) it runs the student's code, which tools/run.sh
# builds lab by lab (a lab that does not build is graded 0 with the compiler's
# reason, not a stop): here only what every lab's run needs.
run: deps
ifneq ($(SOL_LABS),)
	@$(MAKE) --no-print-directory all
else
	@$(MAKE) --no-print-directory features $(LIB) $(B)/tools/report $(B)/tools/jsonq $(DATA)
endif
	@B=$(B) bash tools/run.sh

# the folder make's runs read Fashion-MNIST from, made if need be (tools/gradebook.sh asks);
# nothing when make has no copy to make (no .gz files: DL_DATA_DIR as it is)
data-dir: $(DATA)
	@echo '$(if $(DATA),$(FASHION))'

# the build folder these settings use (tools/run.sh asks)
print-B:
	@echo $(B)

# (the build on every core unless make was given its own -j: a serial build of the kit is two minutes)
test: deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2)) all
	@bash tools/test.sh

test-gpu: all $(B)/tests/gpu
	@bash tools/test-gpu.sh

# (it builds the emulated kit itself, into $(B)/emucuda; the normal build's lab 01 is refused --device emu)
ifeq ($(EMU),1)
test-gpu-emu:
	@echo "make test-gpu-emu: run it without EMU=1 (it builds the emulated kit into \$$B/emucuda itself)" >&2; exit 2
else
test-gpu-emu: $(B)/tools/jsonq $(B)/solutions/lab01 $(DATA)
	@B=$(B) bash tools/test-emu.sh
endif

bench: all $(BENCHES)
	@bash tools/bench.sh

bench-gpu: all $(BENCHES)
	@bash tools/bench-gpu.sh

skeletons: $(B)/tools/skelgen
	@bash tools/skeletons.sh write

check-skeletons: $(B)/tools/skelgen
	@bash tools/skeletons.sh check

mutants: all
	@bash grader/mutants/run.sh

slides: $(B)/tools/report $(DATA)
	@bash tools/slides.sh

style:
	@bash tools/style.sh

gradebook: all
	@bash tools/deps.sh gradebook
	@bash tools/gradebook.sh "$(SUBMISSIONS)" "$(LAB)"

student-release:
	@bash tools/student-release.sh

gradescope:
	@bash tools/gradescope.sh "$(LAB)"

clean:
	rm -rf build

print-%:
	@echo $($*)
