build/asan/obj/cg_source.o: csrc/cg_source.c csrc/cg_source.h \
 csrc/cg_common.h
csrc/cg_source.h:
csrc/cg_common.h:
