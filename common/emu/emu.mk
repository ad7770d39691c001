# common/emu/emu.mk — the emulated CUDA device (common/emu/README.md), a fragment the
# Makefile includes (`include common/emu/emu.mk`, after B, CC, SANFLAGS, Q and say are set).
#
# Builds into $(B)/emu/:
#   $(B)/emu/cu2cc           rewrites a .cu file's launches and __shared__ for the host compiler
#   $(B)/emu/libcudaemu.a    the runtime: the CUDA runtime, cuBLAS and NCCL calls the kit uses
#   $(B)/emu/emu_test        the module's unit tests
#   $(B)/emu/kit/...         the kit's own .cu files built for the emulated device (a compile test)
# Targets: emu (all of it), emu-test (build, then run the unit tests and the must-not-compile
# cases), emu-compile (the kit's .cu files only).
# For the rest of the build: EMU_CXXFLAGS, EMU_LIB, EMU_LDLIBS, and
#   $(call emu_cu,SRC.cu,OBJ.o,EXTRA-FLAGS)  the recipe lines that build one .cu file for the
#                                            emulated device (cu2cc, then $(CXX) -x c++)

EMU_DIR := common/emu
EMU_B := $(B)/emu
CXX ?= g++
ifeq ($(origin CXX),default)
CXX := g++
endif
say ?= @printf '  %-4s %s\n' $(1) $(2)

# A .cu file for the emulated device: C++17 (the launch template, if constexpr), the emulation
# headers before any other, warnings as nvcc's -Xcompiler -Wall gives them; a·b + c never
# contracted into a fused multiply-add, on any processor (README: what it cannot tell).
EMU_CXXFLAGS := -std=c++17 -O2 -g -pthread -Wall -ffp-contract=off -I$(EMU_DIR)/include $(SANFLAGS)
EMU_RT_CXXFLAGS := -std=c++17 -O2 -g -pthread -Wall -Wextra -Werror -Wshadow -I$(EMU_DIR)/include \
                   -I$(EMU_DIR)/src $(SANFLAGS)
EMU_LIB := $(EMU_B)/libcudaemu.a
EMU_LDLIBS := -lpthread -ldl -lm -lstdc++ $(SANFLAGS)
EMU_CU2CC := $(EMU_B)/cu2cc

# $(call emu_cu,src.cu,obj.o,extra flags): rewrite into obj's folder, compile with the .cu
# file's folder first for its quoted includes (cu2cc's output keeps its lines: messages point
# into the .cu file). The dependency file names the .cu file where it named the rewrite, so
# that make rebuilds from the .cu file (and a deleted rewrite is no missing prerequisite).
EMU_DEP_CU = CU_CC='$(2:.o=.cu.cc)' CU='$(1)' perl -pi -e 's/\Q$$ENV{CU_CC}\E/$$ENV{CU}/ if $$. <= 2' $(2:.o=.d)
define emu_cu
	@mkdir -p $(dir $(2))
	$(call say,EMU,$(1))
	$(Q)$(EMU_CU2CC) $(1) -o $(2:.o=.cu.cc)
	$(Q)$(CXX) $(EMU_CXXFLAGS) $(3) -iquote $(dir $(1)) -MMD -MP -MT $(2) -MF $(2:.o=.d) -c $(2:.o=.cu.cc) -o $(2)
	$(Q)$(EMU_DEP_CU)
endef

EMU_RT_SRC := $(wildcard $(EMU_DIR)/src/*.cc)
EMU_RT_OBJ := $(patsubst $(EMU_DIR)/src/%.cc,$(EMU_B)/obj/%.o,$(EMU_RT_SRC))

$(EMU_CU2CC): $(EMU_DIR)/src/cu2cc.c
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow $(SANFLAGS) $< -o $@

$(EMU_B)/obj/%.o: $(EMU_DIR)/src/%.cc
	@mkdir -p $(@D)
	$(call say,CXX,$<)
	$(Q)$(CXX) $(EMU_RT_CXXFLAGS) -MMD -MP -c $< -o $@

$(EMU_LIB): $(EMU_RT_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

# ---- the unit tests: kernels in CUDA (.cu, through cu2cc) and the rest in C++ ----
EMU_TEST_CU := $(wildcard $(EMU_DIR)/tests/*.cu)
EMU_TEST_CC := $(wildcard $(EMU_DIR)/tests/*.cc)
EMU_TEST_OBJ := $(patsubst $(EMU_DIR)/tests/%.cu,$(EMU_B)/tests/%.o,$(EMU_TEST_CU)) \
                $(patsubst $(EMU_DIR)/tests/%.cc,$(EMU_B)/tests/%.o,$(EMU_TEST_CC))

$(EMU_B)/tests/%.o: $(EMU_DIR)/tests/%.cu $(EMU_CU2CC)
	$(call emu_cu,$<,$@,-Wextra -Werror -I$(EMU_DIR)/tests)

$(EMU_B)/tests/%.o: $(EMU_DIR)/tests/%.cc
	@mkdir -p $(@D)
	$(call say,CXX,$<)
	$(Q)$(CXX) $(EMU_CXXFLAGS) -Wextra -Werror -I$(EMU_DIR)/tests -MMD -MP -c $< -o $@

$(EMU_B)/emu_test: $(EMU_TEST_OBJ) $(EMU_LIB)
	$(call say,LD,$@)
	$(Q)$(CXX) $(EMU_CXXFLAGS) $(EMU_TEST_OBJ) $(EMU_LIB) $(EMU_LDLIBS) -o $@

# ---- the kit's own CUDA, built for the emulated device (compiled, not linked) ----
EMU_KIT_CU := $(wildcard common/src/cuda/*.cu labs/01-logreg/*.cu labs/02-evaluation/*.cu \
                solutions/01-logreg/*.cu solutions/02-evaluation/*.cu)
EMU_KIT_OBJ := $(patsubst %.cu,$(EMU_B)/kit/%.o,$(EMU_KIT_CU))
# a lab's files (labs/NN-x or solutions/NN-x) include the lab's headers from labs/NN-x
$(EMU_B)/kit/%.o: %.cu $(EMU_CU2CC)
	$(call emu_cu,$<,$@,-Icommon/include -Icommon/src -Ilabs/$(word 2,$(subst /, ,$<)) -DDL_HAVE_CUDA \
	  -DDL_HAVE_NCCL -Wno-unused-parameter -Wno-unused-variable -Wno-unused-function)

.PHONY: emu emu-test emu-compile
emu: $(EMU_CU2CC) $(EMU_LIB) $(EMU_B)/emu_test $(EMU_KIT_OBJ)
emu-compile: $(EMU_KIT_OBJ)
# The unit tests, then each tests/fail/*.cu must not build and its message must name what
# its `// expect:` line says.
emu-test: $(EMU_B)/emu_test $(EMU_CU2CC)
	$(Q)$(EMU_B)/emu_test
	$(Q)fails=0; for f in $(EMU_DIR)/tests/fail/*.cu; do \
	  want=$$(sed -n 's|^// expect: *||p' "$$f"); out=$(EMU_B)/fail/$$(basename "$$f" .cu); mkdir -p $(EMU_B)/fail; \
	  if $(EMU_CU2CC) "$$f" -o "$$out.cu.cc" 2>"$$out.log" && \
	     $(CXX) $(EMU_CXXFLAGS) -iquote $(EMU_DIR)/tests/fail -c "$$out.cu.cc" -o "$$out.o" 2>>"$$out.log"; then \
	    echo "FAIL $$f: built, but the emulated device cannot run it"; fails=$$((fails + 1)); \
	  elif ! grep -qF -- "$$want" "$$out.log"; then \
	    echo "FAIL $$f: refused without naming '$$want':"; head -5 "$$out.log"; fails=$$((fails + 1)); \
	  else echo "ok   refused $$(basename $$f): $$want"; fi; done; \
	  [ $$fails -eq 0 ] || { echo "emu-test: $$fails must-not-compile case(s) failed"; exit 1; }

-include $(EMU_RT_OBJ:.o=.d) $(EMU_TEST_OBJ:.o=.d) $(EMU_KIT_OBJ:.o=.d)
