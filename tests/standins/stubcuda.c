/*
 * stubcuda.c -- a recording stand-in for the CUDA driver library (libcuda.so.1).
 *
 * Purpose: let Triton's *real* launch path (the per-signature `__triton_launcher` of Triton 3.6,
 * the generic `cuda_utils.launch` of Triton 3.9, and `cuda_utils` itself) run on a machine
 * without a GPU, and record exactly what reaches the driver at kernel launch.
 *
 * How Triton finds this library (both 3.6 and 3.9):
 *   - `cuda_utils` (driver.c) and, in 3.6, every `__triton_launcher` are compiled with gcc
 *     and linked with `-l:libcuda.so.1 -L<dirs>` where <dirs> is `$TRITON_LIBCUDA_PATH` if set
 *     (else `ldconfig -p`).  At run time the dynamic loader resolves the DT_NEEDED
 *     `libcuda.so.1`, so the directory must also be on LD_LIBRARY_PATH (or this library must
 *     already be loaded: the loader matches the SONAME).
 *   - Some entry points are looked up with `dlopen("libcuda.so.1") + dlsym`:
 *     3.6: cuLaunchKernelEx (launcher), cuOccupancyMaxActiveClusters, cuTensorMapEncodeTiled;
 *     3.9: the same plus cuTensorMapEncodeIm2col.
 *   - 3.9's `CudaDriver.is_active()` (torch not imported) calls cuInit and cuDeviceGetCount via
 *     ctypes.  Neither version uses cuGetProcAddress; it is provided anyway.
 *   Link-time imports (nm -u of the compiled modules): cuCtxGetCurrent, cuCtxSetCurrent,
 *   cuCtxGetLimit, cuCtxSetLimit, cuDeviceGet, cuDeviceGetAttribute, cuDevicePrimaryCtxRetain,
 *   cuFuncGetAttribute, cuFuncSetAttribute, cuFuncSetCacheConfig, cuGetErrorString,
 *   cuModuleGetFunction, cuModuleLoadData, cuPointerGetAttribute (launcher);
 *   3.9 adds cuCtxGetDevice, cuDriverGetVersion, cuModuleUnload, cuStreamIsCapturing.
 *
 * Behaviour: every call succeeds with plausible values of an H100 (sm_90, 132 SMs, 227 KiB
 * opt-in shared memory per block, ...), EXCEPT misuse a real driver would also reject:
 * an unknown or unloaded module/function handle -> CUDA_ERROR_INVALID_HANDLE, a kernel name
 * absent from a parsed cubin -> CUDA_ERROR_NOT_FOUND, a module image that is neither an ELF
 * cubin, a fatbinary nor PTX text (a corrupt binary) -> CUDA_ERROR_INVALID_IMAGE.  Those surface in Triton as
 * "Triton Error [CUDA]: invalid resource handle" / "named symbol not found".
 *
 * Handles: cuModuleLoadData returns a new fake module per call (numbered 1, 2, ... in load
 * order); cuModuleGetFunction returns one fake function per (module, kernel name).
 * Parameter sizes come from the cubin itself: the `.nv.info.<kernel>` ELF section holds one
 * EIATTR_KPARAM_INFO record per kernel parameter (ordinal, offset, size) -- exactly the table
 * the real driver uses to copy `kernelParams[i]`.  So each recorded parameter has the size the
 * driver would read (pointers 8, i32/u32/fp32 4, i64/u64/fp64 8, fp16/bf16 2, i8/u8/i1/u1 1,
 * nvTmaDesc 128, the two trailing scratch pointers 8 each).  Note: 3.9's launcher stores
 * i1/u1 in a 4-byte slot, but the PTX parameter is `.u8`, so the driver (and this stub)
 * reads 1 byte -- the low byte, i.e. the value.
 *
 * LOG FORMAT.  If the environment variable STUBCUDA_LOG names a file, every cuLaunchKernelEx
 * and cuLaunchKernel call appends exactly one line (one write(2) on an O_APPEND descriptor):
 *
 *   LAUNCH kernel=<name> module=<n> function=0x<hex> grid=<x>,<y>,<z> block=<x>,<y>,<z>
 *          shared=<bytes> stream=0x<hex> attrs=<attrs> params=<params>\n
 *
 * (one line; fields separated by single spaces, always in this order)
 *   kernel    the kernel name given to cuModuleGetFunction
 *   module    the load number of the module the function belongs to (1 = first cuModuleLoadData
 *             in the process); a different number means the binary was loaded again
 *   function  the fake CUfunction handle
 *   grid      gridDimX,Y,Z as passed (Triton already multiplied X by num_ctas)
 *   block     blockDimX,Y,Z
 *   shared    dynamic shared memory bytes
 *   stream    the CUstream handle as an integer
 *   attrs     launch attributes separated by ';', each `<id>:<a>,<b>,<c>` where id is the
 *             CUlaunchAttributeID and a,b,c are the first three little-endian uint32 words of
 *             the value union (cluster dims x,y,z; or the scalar value followed by 0,0);
 *             empty if there are none (always empty for cuLaunchKernel)
 *   params    the raw bytes of every kernel parameter, in order, as lowercase hex of the bytes
 *             in memory order (little-endian), separated by ','; empty if the kernel takes no
 *             parameters.  `params=?` if the sizes are unknown (the module image was not an
 *             ELF cubin) or no parameters were passed; with cuLaunchKernel's `extra` buffer
 *             form, a single `?` entry marks a parameter lying outside the given buffer.
 *
 * Example:
 *   LAUNCH kernel=add_kernel module=1 function=0x55d0c1a0 grid=4,1,1 block=128,1,1 shared=0
 *          stream=0xc0ffee attrs= params=0040a3b1fd7f0000,...,a00f0000,0000000000000000,0000000000000000
 *
 * Build: gcc -shared -fPIC -O2 -Wl,-soname,libcuda.so.1 -I<triton>/backends/nvidia/include
 *        stubcuda.c -o libcuda.so.1 -lpthread -ldl
 */

#define _GNU_SOURCE
#include "cuda.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --------------------------------------------------------------------------------------------
 * Fake device: an H100 SXM (sm_90).
 * ------------------------------------------------------------------------------------------ */

#define STUB_NUM_SMS 132
#define STUB_CC_MAJOR 9
#define STUB_CC_MINOR 0
#define STUB_DRIVER_VERSION 12080 /* CUDA 12.8 driver; 3.9 checks <= 13010 for a TMA quirk */
#define STUB_MAX_THREADS_PER_BLOCK 1024
#define STUB_REGS_PER_BLOCK 65536
#define STUB_SMEM_OPTIN (227 * 1024)   /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
#define STUB_SMEM_PER_SM (228 * 1024)  /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
#define STUB_TOTAL_MEM (80ull << 30)

/* Marks this library as the stub (fakedriver.py refuses to run against a real libcuda) and
 * versions the log format above. */
const int stubcuda_log_format_version = 1;

/* Whether the thread that made the last launch (cuLaunchKernelEx or cuLaunchKernel) held
 * Python's GIL then (PyGILState_Check, looked up in the process); -1 before any launch, or in a
 * process without Python.  Tests read it (ctypes) to see who lets go of the GIL around a launch. */
int stubcuda_last_launch_held_gil = -1;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int gil_held(void) {
  static int (*check)(void);
  static int looked;
  if (!looked) {
    check = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Check");
    looked = 1;
  }
  return check != NULL ? check() : -1;
}

/* --------------------------------------------------------------------------------------------
 * Fake handles.  Handles are pointers to these structs, but we never dereference a handle we
 * did not find in our own lists first.
 * ------------------------------------------------------------------------------------------ */

typedef struct {
  char *name;
  int nparams;       /* 1 + the highest KPARAM_INFO ordinal (includes Triton's scratch pointers) */
  uint32_t *sizes;   /* by ordinal */
  uint32_t *offsets; /* by ordinal, offset inside the parameter buffer */
  int symbol;        /* ELF symbol index of the kernel (sh_info of .text.<name>), 0 if unknown */
  int num_regs;      /* EIATTR_REGCOUNT from `.nv.info`, 0 if unknown */
} KernelInfo;

typedef struct StubModule {
  int load_no; /* 1, 2, ... in load order */
  int loaded;  /* 0 after cuModuleUnload */
  int parsed;  /* 1 if the image was an ELF cubin we could read */
  int nkernels;
  KernelInfo *kernels;
  struct StubModule *next;
} StubModule;

typedef struct StubFunction {
  StubModule *module;
  KernelInfo *info; /* NULL if the module was not parsed */
  char *name;
  int max_dynamic_smem;
  struct StubFunction *next;
} StubFunction;

static StubModule *g_modules = NULL;
static StubFunction *g_functions = NULL;
static int g_next_load_no = 1;

/* A single primary context shared by all devices; its address is the CUcontext. */
static int g_ctx_storage;
/* Real drivers start with no current context (Triton then retains the primary one).  The
 * current context is process-wide here, not per thread as in CUDA: good enough for tests. */
static CUcontext g_current_ctx = NULL;
static CUdevice g_ctx_device = 0;
static size_t g_limits[32];

static StubModule *find_module(CUmodule h) {
  for (StubModule *m = g_modules; m; m = m->next)
    if ((CUmodule)m == h)
      return m;
  return NULL;
}

static StubFunction *find_function(CUfunction h) {
  for (StubFunction *f = g_functions; f; f = f->next)
    if ((CUfunction)f == h)
      return f;
  return NULL;
}

/* --------------------------------------------------------------------------------------------
 * Cubin parsing: kernel parameter sizes from EIATTR_KPARAM_INFO.
 *
 * `.nv.info.<kernel>` is a list of records: u8 format, u8 attribute, then
 *   format 0x04 (EIFMT_SVAL): u16 size + `size` bytes of payload;
 *   formats 0x01/0x02/0x03 (NVAL/BVAL/HVAL): 2 more bytes.
 * EIATTR_KPARAM_INFO (0x17) payload, 12 bytes: u32 index, u16 ordinal, u16 offset, u32 flags;
 * the parameter size in bytes is flags >> 18 (verified against `cuobjdump -elf`).
 * cuModuleLoadData gets no image size; we trust the ELF header's section table, as the real
 * driver does.
 * ------------------------------------------------------------------------------------------ */

#define EIFMT_SVAL 0x04
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_REGCOUNT 0x2f

static KernelInfo *module_kernel(StubModule *m, const char *name, int create) {
  for (int i = 0; i < m->nkernels; ++i)
    if (strcmp(m->kernels[i].name, name) == 0)
      return &m->kernels[i];
  if (!create)
    return NULL;
  m->kernels = realloc(m->kernels, sizeof(KernelInfo) * (m->nkernels + 1));
  KernelInfo *k = &m->kernels[m->nkernels++];
  memset(k, 0, sizeof(*k));
  k->name = strdup(name);
  k->nparams = 0;
  return k;
}

static void parse_nv_info(KernelInfo *k, const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i + 4 <= n) {
    unsigned fmt = p[i], attr = p[i + 1];
    if (fmt != EIFMT_SVAL) {
      i += 4;
      continue;
    }
    uint16_t sz;
    memcpy(&sz, p + i + 2, 2);
    const unsigned char *val = p + i + 4;
    if (i + 4 + sz > n)
      break;
    if (attr == EIATTR_KPARAM_INFO && sz >= 12) {
      uint16_t ordinal, offset;
      uint32_t flags;
      memcpy(&ordinal, val + 4, 2);
      memcpy(&offset, val + 6, 2);
      memcpy(&flags, val + 8, 4);
      if (ordinal >= k->nparams) {
        k->sizes = realloc(k->sizes, sizeof(uint32_t) * (ordinal + 1));
        k->offsets = realloc(k->offsets, sizeof(uint32_t) * (ordinal + 1));
        for (int j = k->nparams; j <= ordinal; ++j)
          k->sizes[j] = k->offsets[j] = 0;
        k->nparams = ordinal + 1;
      }
      k->sizes[ordinal] = flags >> 18;
      k->offsets[ordinal] = offset;
    }
    i += 4 + sz;
  }
}

static void parse_cubin(StubModule *m, const unsigned char *img) {
  if (memcmp(img, ELFMAG, SELFMAG) != 0 || img[EI_CLASS] != ELFCLASS64)
    return; /* PTX text or a fatbin: parameter sizes stay unknown */
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
  if (eh->e_machine != EM_CUDA)
    return; /* another GPU's code object (an AMD hsaco, the HIP-target stand-in): sizes unknown */
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
  const char *shstr = (const char *)(img + sh[eh->e_shstrndx].sh_offset);
  const unsigned char *global_info = NULL; /* `.nv.info`: per-function attributes */
  size_t global_info_size = 0;
  for (int i = 0; i < eh->e_shnum; ++i) {
    const char *sname = shstr + sh[i].sh_name;
    if (strncmp(sname, ".nv.info.", 9) == 0) {
      KernelInfo *k = module_kernel(m, sname + 9, 1);
      parse_nv_info(k, img + sh[i].sh_offset, sh[i].sh_size);
    } else if (strcmp(sname, ".nv.info") == 0) {
      global_info = img + sh[i].sh_offset;
      global_info_size = sh[i].sh_size;
    } else if (strncmp(sname, ".text.", 6) == 0) {
      /* sh_info of a kernel's code section is the index of the kernel's symbol. */
      module_kernel(m, sname + 6, 1)->symbol = (int)sh[i].sh_info;
    }
  }
  /* EIATTR_REGCOUNT records in `.nv.info`: u32 symbol index, u32 registers per thread. */
  for (size_t i = 0; global_info && i + 4 <= global_info_size;) {
    uint16_t sz;
    if (global_info[i] != EIFMT_SVAL) {
      i += 4;
      continue;
    }
    memcpy(&sz, global_info + i + 2, 2);
    if (i + 4 + sz > global_info_size)
      break;
    if (global_info[i + 1] == EIATTR_REGCOUNT && sz >= 8) {
      uint32_t sym, regs;
      memcpy(&sym, global_info + i + 4, 4);
      memcpy(&regs, global_info + i + 8, 4);
      for (int k = 0; k < m->nkernels; ++k)
        if (m->kernels[k].symbol == (int)sym)
          m->kernels[k].num_regs = (int)regs;
    }
    i += 4 + sz;
  }
  m->parsed = 1;
}

/* --------------------------------------------------------------------------------------------
 * Launch log.
 * ------------------------------------------------------------------------------------------ */

typedef struct {
  char *buf;
  size_t len, cap;
} Str;

static void str_printf(Str *s, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    size_t room = s->cap - s->len;
    va_start(ap, fmt);
    int n = vsnprintf(s->buf ? s->buf + s->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0)
      return;
    if ((size_t)n < room) {
      s->len += (size_t)n;
      return;
    }
    s->cap = (s->cap + (size_t)n + 1) * 2;
    s->buf = realloc(s->buf, s->cap);
  }
}

static void str_hex(Str *s, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i)
    str_printf(s, "%02x", b[i]);
}

/* Caller holds g_lock.  param_ptrs: kernelParams (array of pointers) or NULL;
 * buffer/buffer_size: the CU_LAUNCH_PARAM_BUFFER_POINTER form of `extra`. */
static void log_launch(StubFunction *f, const unsigned grid[3], const unsigned block[3],
                       unsigned shared, CUstream stream, const CUlaunchAttribute *attrs,
                       unsigned nattrs, void **param_ptrs, const unsigned char *buffer,
                       size_t buffer_size) {
  const char *path = getenv("STUBCUDA_LOG");
  if (!path || !*path)
    return;
  Str s = {0};
  str_printf(&s, "LAUNCH kernel=%s module=%d function=%p grid=%u,%u,%u block=%u,%u,%u shared=%u "
                 "stream=0x%llx attrs=",
             f->name, f->module->load_no, (void *)f, grid[0], grid[1], grid[2], block[0],
             block[1], block[2], shared, (unsigned long long)(uintptr_t)stream);
  for (unsigned i = 0; i < nattrs; ++i) {
    uint32_t w[3];
    memcpy(w, &attrs[i].value, sizeof(w));
    str_printf(&s, "%s%d:%u,%u,%u", i ? ";" : "", (int)attrs[i].id, w[0], w[1], w[2]);
  }
  str_printf(&s, " params=");
  KernelInfo *k = f->info;
  if (!k || (!param_ptrs && !buffer)) {
    str_printf(&s, "?");
  } else {
    for (int i = 0; i < k->nparams; ++i) {
      if (i)
        str_printf(&s, ",");
      if (param_ptrs) {
        str_hex(&s, param_ptrs[i], k->sizes[i]);
      } else if ((size_t)k->offsets[i] + k->sizes[i] <= buffer_size) {
        str_hex(&s, buffer + k->offsets[i], k->sizes[i]);
      } else {
        str_printf(&s, "?");
      }
    }
  }
  str_printf(&s, "\n");
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ssize_t w = write(fd, s.buf, s.len);
    (void)w;
    close(fd);
  }
  free(s.buf);
}

/* --------------------------------------------------------------------------------------------
 * Errors.
 * ------------------------------------------------------------------------------------------ */

static const char *error_string(CUresult e) {
  switch (e) {
  case CUDA_SUCCESS:
    return "no error";
  case CUDA_ERROR_INVALID_VALUE:
    return "invalid argument";
  case CUDA_ERROR_INVALID_HANDLE:
    return "invalid resource handle";
  case CUDA_ERROR_NOT_FOUND:
    return "named symbol not found";
  default:
    return "unknown error";
  }
}

static const char *error_name(CUresult e) {
  switch (e) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_INVALID_HANDLE:
    return "CUDA_ERROR_INVALID_HANDLE";
  case CUDA_ERROR_NOT_FOUND:
    return "CUDA_ERROR_NOT_FOUND";
  default:
    return "CUDA_ERROR_UNKNOWN";
  }
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr) {
  if (pStr)
    *pStr = error_string(error);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr) {
  if (pStr)
    *pStr = error_name(error);
  return CUDA_SUCCESS;
}

/* --------------------------------------------------------------------------------------------
 * Initialization, devices, contexts.
 * ------------------------------------------------------------------------------------------ */

CUresult CUDAAPI cuInit(unsigned int Flags) {
  (void)Flags;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion) {
  *driverVersion = STUB_DRIVER_VERSION;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  /* Any ordinal is accepted (the fake driver may use device -1, see fakedriver.py). */
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
  (void)dev;
  if (len > 0)
    snprintf(name, (size_t)len, "NVIDIA H100 80GB HBM3 (stubcuda)");
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) { /* = cuDeviceTotalMem_v2 */
  (void)dev;
  *bytes = (size_t)STUB_TOTAL_MEM;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  (void)dev;
  int v;
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    v = STUB_MAX_THREADS_PER_BLOCK;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    v = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    v = 64;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    v = 2147483647;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    v = 65535;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    v = 48 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
    v = 64 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    v = 32;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
    v = STUB_REGS_PER_BLOCK;
    break;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
    v = 1980000; /* kHz */
    break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
    v = 2619000; /* kHz */
    break;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
    v = 5120;
    break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    v = 50 * 1024 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    v = STUB_NUM_SMS;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
    v = 2048;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
    v = 32;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    v = STUB_CC_MAJOR;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    v = STUB_CC_MINOR;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
    v = STUB_SMEM_PER_SM;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    v = STUB_SMEM_OPTIN;
    break;
  case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
  case CU_DEVICE_ATTRIBUTE_INTEGRATED:
  case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
  case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
  case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
    v = 0;
    break;
  default:
    /* Remaining attributes are mostly "feature supported" flags: an H100 supports them. */
    v = 1;
    break;
  }
  *pi = v;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  pthread_mutex_lock(&g_lock);
  g_ctx_device = dev;
  pthread_mutex_unlock(&g_lock);
  *pctx = (CUcontext)&g_ctx_storage;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) { /* = cuDevicePrimaryCtxRelease_v2 */
  (void)dev;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx) {
  *pctx = g_current_ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  g_current_ctx = ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) {
  *device = g_ctx_device;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit) {
  *pvalue = ((unsigned)limit < 32) ? g_limits[limit] : 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
  if ((unsigned)limit < 32)
    g_limits[limit] = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  (void)hStream;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus) {
  (void)hStream;
  *captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

/* --------------------------------------------------------------------------------------------
 * Pointers: every address is "device memory" that maps to itself.
 * ------------------------------------------------------------------------------------------ */

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_CONTEXT:
    *(CUcontext *)data = (CUcontext)&g_ctx_storage;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
  case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    *(CUdeviceptr *)data = ptr;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    *(unsigned int *)data = 0;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    *(int *)data = 0;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                        void **data, CUdeviceptr ptr) {
  for (unsigned i = 0; i < numAttributes; ++i) {
    CUresult r = cuPointerGetAttribute(data[i], attributes[i], ptr);
    if (r != CUDA_SUCCESS)
      return r;
  }
  return CUDA_SUCCESS;
}

/* --------------------------------------------------------------------------------------------
 * Modules and functions.
 * ------------------------------------------------------------------------------------------ */

/* Whether a driver could parse ``image``: an ELF cubin, a fatbinary or PTX text.  Anything
 * else is what a real driver rejects with CUDA_ERROR_INVALID_IMAGE (a corrupt binary, say). */
static int loadable_image(const unsigned char *image) {
  static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba};
  if (memcmp(image, ELFMAG, SELFMAG) == 0 || memcmp(image, fatbin, 4) == 0)
    return 1;
  return image[0] == '/' || image[0] == '.' || image[0] == '\n' || image[0] == ' ' || image[0] == '\t';
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  if (image == NULL || module == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!loadable_image((const unsigned char *)image))
    return CUDA_ERROR_INVALID_IMAGE;
  StubModule *m = calloc(1, sizeof(StubModule));
  m->loaded = 1;
  parse_cubin(m, (const unsigned char *)image);
  pthread_mutex_lock(&g_lock);
  m->load_no = g_next_load_no++;
  m->next = g_modules;
  g_modules = m;
  pthread_mutex_unlock(&g_lock);
  *module = (CUmodule)m;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues) {
  (void)numOptions;
  (void)options;
  (void)optionValues;
  return cuModuleLoadData(module, image);
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&g_lock);
  StubModule *m = find_module(hmod);
  if (!m || !m->loaded)
    r = CUDA_ERROR_INVALID_HANDLE;
  else
    m->loaded = 0; /* keep the record: later use of its functions is reported as invalid */
  pthread_mutex_unlock(&g_lock);
  return r;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&g_lock);
  StubModule *m = find_module(hmod);
  if (!m || !m->loaded) {
    r = CUDA_ERROR_INVALID_HANDLE;
    goto out;
  }
  KernelInfo *k = NULL;
  if (m->parsed) {
    k = module_kernel(m, name, 0);
    if (!k) {
      r = CUDA_ERROR_NOT_FOUND;
      goto out;
    }
  }
  StubFunction *f;
  for (f = g_functions; f; f = f->next)
    if (f->module == m && strcmp(f->name, name) == 0)
      break;
  if (!f) {
    f = calloc(1, sizeof(StubFunction));
    f->module = m;
    f->info = k;
    f->name = strdup(name);
    f->next = g_functions;
    g_functions = f;
  }
  *hfunc = (CUfunction)f;
out:
  pthread_mutex_unlock(&g_lock);
  return r;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc) {
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&g_lock);
  StubFunction *f = find_function(hfunc);
  if (!f) {
    r = CUDA_ERROR_INVALID_HANDLE;
    goto out;
  }
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *pi = STUB_MAX_THREADS_PER_BLOCK;
    break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *pi = (f->info && f->info->num_regs) ? f->info->num_regs : 32;
    break;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
    *pi = STUB_CC_MAJOR * 10 + STUB_CC_MINOR;
    break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *pi = f->max_dynamic_smem;
    break;
  default: /* SHARED_SIZE_BYTES, CONST_SIZE_BYTES, LOCAL_SIZE_BYTES (no spills), ... */
    *pi = 0;
    break;
  }
out:
  pthread_mutex_unlock(&g_lock);
  return r;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&g_lock);
  StubFunction *f = find_function(hfunc);
  if (!f)
    r = CUDA_ERROR_INVALID_HANDLE;
  else if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    f->max_dynamic_smem = value;
  pthread_mutex_unlock(&g_lock);
  return r;
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  (void)config;
  pthread_mutex_lock(&g_lock);
  CUresult r = find_function(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_unlock(&g_lock);
  return r;
}

CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
                                              const CUlaunchConfig *config) {
  (void)func;
  unsigned cluster = 1;
  for (unsigned i = 0; config && i < config->numAttrs; ++i)
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      cluster = config->attrs[i].value.clusterDim.x * config->attrs[i].value.clusterDim.y *
                config->attrs[i].value.clusterDim.z;
  *numClusters = cluster ? (int)(STUB_NUM_SMS / cluster) : 0;
  return CUDA_SUCCESS;
}

/* --------------------------------------------------------------------------------------------
 * Tensor maps: a recognizable descriptor (global address in the first 8 bytes, rest zero), so
 * a launch record shows which tensor a nvTmaDesc parameter describes.
 * ------------------------------------------------------------------------------------------ */

static void fake_tensor_map(CUtensorMap *tensorMap, void *globalAddress) {
  memset(tensorMap, 0, sizeof(*tensorMap));
  uint64_t a = (uint64_t)(uintptr_t)globalAddress;
  memcpy(tensorMap, &a, sizeof(a));
}

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                        cuuint32_t tensorRank, void *globalAddress,
                                        const cuuint64_t *globalDim,
                                        const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
                                        const cuuint32_t *elementStrides,
                                        CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                        CUtensorMapL2promotion l2Promotion,
                                        CUtensorMapFloatOOBfill oobFill) {
  (void)tensorDataType, (void)tensorRank, (void)globalDim, (void)globalStrides, (void)boxDim;
  (void)elementStrides, (void)interleave, (void)swizzle, (void)l2Promotion, (void)oobFill;
  fake_tensor_map(tensorMap, globalAddress);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTensorMapEncodeIm2col(
    CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
    void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
    const int *pixelBoxLowerCorner, const int *pixelBoxUpperCorner, cuuint32_t channelsPerPixel,
    cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
    CUtensorMapFloatOOBfill oobFill) {
  (void)tensorDataType, (void)tensorRank, (void)globalDim, (void)globalStrides;
  (void)pixelBoxLowerCorner, (void)pixelBoxUpperCorner, (void)channelsPerPixel;
  (void)pixelsPerColumn, (void)elementStrides, (void)interleave, (void)swizzle;
  (void)l2Promotion, (void)oobFill;
  fake_tensor_map(tensorMap, globalAddress);
  return CUDA_SUCCESS;
}

/* --------------------------------------------------------------------------------------------
 * Launches.
 * ------------------------------------------------------------------------------------------ */

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra) {
  CUresult r = CUDA_SUCCESS;
  int held = gil_held();
  pthread_mutex_lock(&g_lock);
  stubcuda_last_launch_held_gil = held;
  StubFunction *fn = find_function(f);
  if (!fn || !fn->module->loaded) {
    r = CUDA_ERROR_INVALID_HANDLE;
    goto out;
  }
  const unsigned char *buffer = NULL;
  size_t buffer_size = 0;
  for (int i = 0; !kernelParams && extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
      buffer = extra[i + 1];
    else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
      buffer_size = *(size_t *)extra[i + 1];
  }
  unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  log_launch(fn, grid, block, config->sharedMemBytes, config->hStream, config->attrs,
             config->numAttrs, kernelParams, buffer, buffer_size);
out:
  pthread_mutex_unlock(&g_lock);
  return r;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream,
                                void **kernelParams, void **extra) {
  CUlaunchConfig config = {0};
  config.gridDimX = gridDimX;
  config.gridDimY = gridDimY;
  config.gridDimZ = gridDimZ;
  config.blockDimX = blockDimX;
  config.blockDimY = blockDimY;
  config.blockDimZ = blockDimZ;
  config.sharedMemBytes = sharedMemBytes;
  config.hStream = hStream;
  return cuLaunchKernelEx(&config, f, kernelParams, extra);
}

/* --------------------------------------------------------------------------------------------
 * cuGetProcAddress (= cuGetProcAddress_v2 in cuda.h): resolve our own exports by name.
 * Not used by Triton 3.6/3.9; here for other clients of the stub.
 * ------------------------------------------------------------------------------------------ */

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus) {
  (void)cudaVersion;
  (void)flags;
  Dl_info info;
  void *self = NULL;
  if (dladdr((void *)&cuInit, &info) && info.dli_fname)
    self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  *pfn = self ? dlsym(self, symbol) : NULL;
  if (self)
    dlclose(self);
  if (symbolStatus)
    *symbolStatus = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
