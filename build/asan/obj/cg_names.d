build/asan/obj/cg_names.o: csrc/cg_names.c csrc/cg_names.h \
 csrc/cg_common.h
csrc/cg_names.h:
csrc/cg_common.h:
