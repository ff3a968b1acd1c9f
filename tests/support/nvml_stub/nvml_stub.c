/* A stand-in for NVIDIA's libnvidia-ml.so.1 (NVML) for machines without NVIDIA GPUs: the real
 * binding (nvidia-ml-py's pynvml) loads it and npu-dra's nvml backend runs over it unchanged.
 *
 * It reports the GPUs of a host description file named by NVML_STUB_HOST, read at nvmlInit:
 *   driver <version>
 *   cuda <version as NVML gives it, e.g. 12080>
 *   gpu <index> <minor> <uuid> <memory bytes> <pci bus id> <cc major> <cc minor> <numa> <name...>
 *   xid <index> <code>          (one XID critical-error event)
 * nvmlEventSetWait_v2 delivers the xid events in order, each once after nvmlInit, then returns
 * NVML_ERROR_TIMEOUT without waiting. Lines it cannot parse, and xids naming no GPU, are skipped.
 * Without the file nvmlInit fails with NVML_ERROR_DRIVER_NOT_LOADED, as on a host without the
 * driver. Build: cc -std=c99 -O2 -Wall -Werror -shared -fPIC -Wl,-soname,libnvidia-ml.so.1
 *
 * Vendor facts (signatures, struct layouts, enum values) are those of the ctypes definitions in
 * pynvml.py from nvidia-ml-py 13.615.71 (the binding this project uses), which mirror nvml.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64
#define MAX_XIDS 64

/* pynvml.py: NVML_SUCCESS, NVML_ERROR_UNINITIALIZED .. NVML_ERROR_TIMEOUT */
enum { OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_FOUND = 6, INSUFFICIENT_SIZE = 7,
       DRIVER_NOT_LOADED = 9, TIMEOUT = 10 };
/* pynvml.py: NVML_BRAND_NVIDIA = 14 (_nvmlBrandType_t = c_uint), NVML_DEVICE_ARCH_HOPPER = 9 */
enum { BRAND_NVIDIA = 14, ARCH_HOPPER = 9 };
/* pynvml.py: nvmlEventTypeXidCriticalError = 0x0000000000000008 */
static const unsigned long long XID_CRITICAL = 0x8ULL;

typedef struct {               /* pynvml.py: class c_nvmlMemory_t (c_ulonglong each) */
    unsigned long long total, free, used;
} nvml_memory;
typedef struct {               /* pynvml.py: class nvmlPciInfo_t */
    char bus_id_legacy[16];    /* NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16 */
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];           /* NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32 */
} nvml_pci;
struct gpu {                   /* the stub's own record; its address is the nvmlDevice_t */
    unsigned int index, minor;
    int numa, cc_major, cc_minor;
    unsigned long long memory;
    char uuid[96], bus_id[32], name[96];
};
typedef struct gpu *nvml_device;
typedef struct {               /* pynvml.py: class c_nvmlEventData_t */
    nvml_device device;
    unsigned long long event_type, event_data;
    unsigned int gpu_instance_id, compute_instance_id;
} nvml_event;

static struct gpu gpus[MAX_GPUS];
static unsigned int gpu_count;
static unsigned int xids[MAX_XIDS][2];
static unsigned int xid_count, xid_next;
static char driver[80] = "0", initialised;
static int cuda;
static int event_set_token;

static int copy_text(char *out, unsigned int size, const char *text) {
    if (!out || strlen(text) + 1 > size) return INSUFFICIENT_SIZE;
    strcpy(out, text);
    return OK;
}

static void read_gpu(const char *rest) {
    struct gpu *g = &gpus[gpu_count];
    int used = 0;
    if (gpu_count >= MAX_GPUS) return;
    if (sscanf(rest, "%u %u %95s %llu %31s %d %d %d %n", &g->index, &g->minor, g->uuid,
               &g->memory, g->bus_id, &g->cc_major, &g->cc_minor, &g->numa, &used) < 8) return;
    snprintf(g->name, sizeof g->name, "%s", rest + used);
    g->name[strcspn(g->name, "\n")] = 0;
    gpu_count++;
}

static int read_host(void) {
    const char *path = getenv("NVML_STUB_HOST");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[512];
    if (!f) return DRIVER_NOT_LOADED;
    gpu_count = xid_count = xid_next = 0;
    strcpy(driver, "0");
    cuda = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "driver ", 7)) sscanf(line + 7, "%79s", driver);
        else if (!strncmp(line, "cuda ", 5)) cuda = atoi(line + 5);
        else if (!strncmp(line, "gpu ", 4)) read_gpu(line + 4);
        else if (!strncmp(line, "xid ", 4) && xid_count < MAX_XIDS
                 && sscanf(line + 4, "%u %u", &xids[xid_count][0], &xids[xid_count][1]) == 2)
            xid_count++;
    }
    fclose(f);
    return OK;
}

#define DEVICE_OR_FAIL(d) \
    if (!initialised) return UNINITIALIZED; \
    if (!(d) || (d) < gpus || (d) >= gpus + gpu_count) return INVALID_ARGUMENT

int nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    int rc = read_host();
    initialised = rc == OK;
    return rc;
}
int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
int nvmlShutdown(void) { initialised = 0; return OK; }

const char *nvmlErrorString(int result) {
    switch (result) {
    case OK: return "Success";
    case UNINITIALIZED: return "Uninitialized";
    case INVALID_ARGUMENT: return "Invalid Argument";
    case NOT_FOUND: return "Not Found";
    case INSUFFICIENT_SIZE: return "Insufficient Size";
    case DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case TIMEOUT: return "Timeout";
    default: return "Unknown Error";
    }
}

int nvmlSystemGetDriverVersion(char *version, unsigned int size) {
    return initialised ? copy_text(version, size, driver) : UNINITIALIZED;
}
int nvmlSystemGetCudaDriverVersion(int *version) {
    if (!initialised) return UNINITIALIZED;
    *version = cuda;
    return OK;
}
int nvmlSystemGetCudaDriverVersion_v2(int *version) {
    return nvmlSystemGetCudaDriverVersion(version);
}
int nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialised) return UNINITIALIZED;
    *count = gpu_count;
    return OK;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvml_device *device) {
    if (!initialised) return UNINITIALIZED;
    if (index >= gpu_count) return INVALID_ARGUMENT;
    *device = &gpus[index];
    return OK;
}
int nvmlDeviceGetUUID(nvml_device d, char *uuid, unsigned int size) {
    DEVICE_OR_FAIL(d);
    return copy_text(uuid, size, d->uuid);
}
int nvmlDeviceGetName(nvml_device d, char *name, unsigned int size) {
    DEVICE_OR_FAIL(d);
    return copy_text(name, size, d->name);
}
int nvmlDeviceGetMinorNumber(nvml_device d, unsigned int *minor) {
    DEVICE_OR_FAIL(d);
    *minor = d->minor;
    return OK;
}
int nvmlDeviceGetMemoryInfo(nvml_device d, nvml_memory *memory) {
    DEVICE_OR_FAIL(d);
    memory->total = memory->free = d->memory;
    memory->used = 0;
    return OK;
}
int nvmlDeviceGetPciInfo_v3(nvml_device d, nvml_pci *pci) {
    DEVICE_OR_FAIL(d);
    memset(pci, 0, sizeof *pci);
    snprintf(pci->bus_id, sizeof pci->bus_id, "%s", d->bus_id);
    snprintf(pci->bus_id_legacy, sizeof pci->bus_id_legacy, "%.15s", d->bus_id + 4);
    sscanf(d->bus_id, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
    return OK;
}
int nvmlDeviceGetCudaComputeCapability(nvml_device d, int *major, int *minor) {
    DEVICE_OR_FAIL(d);
    *major = d->cc_major;
    *minor = d->cc_minor;
    return OK;
}
int nvmlDeviceGetBrand(nvml_device d, int *brand) {
    DEVICE_OR_FAIL(d);
    *brand = BRAND_NVIDIA;
    return OK;
}
int nvmlDeviceGetArchitecture(nvml_device d, unsigned int *architecture) {
    DEVICE_OR_FAIL(d);
    *architecture = ARCH_HOPPER;
    return OK;
}
int nvmlDeviceGetMigMode(nvml_device d, unsigned int *current, unsigned int *pending) {
    DEVICE_OR_FAIL(d);
    *current = *pending = 0;
    return OK;
}
int nvmlDeviceGetNumaNodeId(nvml_device d, int *node) {  /* pynvml.py: node = c_int() */
    DEVICE_OR_FAIL(d);
    *node = d->numa;
    return OK;
}

int nvmlEventSetCreate(void **set) {
    if (!initialised) return UNINITIALIZED;
    *set = &event_set_token;
    return OK;
}
int nvmlDeviceRegisterEvents(nvml_device d, unsigned long long types, void *set) {
    DEVICE_OR_FAIL(d);
    return set == &event_set_token && (types & XID_CRITICAL) ? OK : INVALID_ARGUMENT;
}
int nvmlEventSetWait_v2(void *set, nvml_event *data, unsigned int timeout_ms) {
    (void)timeout_ms;  /* the recorded events are all there is: no waiting for more */
    if (!initialised) return UNINITIALIZED;
    if (set != &event_set_token) return INVALID_ARGUMENT;
    while (xid_next < xid_count) {
        unsigned int index = xids[xid_next][0], code = xids[xid_next][1];
        xid_next++;
        if (index >= gpu_count) continue;
        memset(data, 0, sizeof *data);
        data->device = &gpus[index];
        data->event_type = XID_CRITICAL;
        data->event_data = code;
        return OK;
    }
    return TIMEOUT;
}
int nvmlEventSetFree(void *set) { (void)set; return OK; }
