/* The project's own declarations of the DCMI structures and functions the stand-in serves.
 *
 * Written from Huawei's public header in github.com/Ascend/mind-cluster,
 * component/ascend-common/devmanager/dcmi/dcmi_interface_api.h (struct layouts, prototypes),
 * return codes from component/ascend-common/devmanager/dcmi/common.go (dcmiErrMap) and limits
 * from component/ascend-common/devmanager/common/constants.go (MaxErrorCodeCount = 128,
 * HiAIMaxCardNum = 64, SubscribeAllDevice = -1) and dcmi/constants.go (TopoInfoMaxLen = 32,
 * MainCmdVDevMng = 52, VmngSubCmdGetVDevResource = 0, VmngSubCmdGetTotalResource = 1,
 * DcmiMaxVdevNum = 32, MainCmdChipInf = 12, CinfSubCmdGetSPodInfo = 1; dcmi.go's
 * DcGetDeviceIPAddress asks port type 1, DCMI_ROCE_PORT). The fault callback's type is the one dcmi/dcmi.go's cgo preamble declares
 * for dcmi_subscribe_fault_event (the header omits that parameter). Not a copy of the header:
 * only what npu-dra calls, declared again. The ctypes mirrors are
 * src/adapters/hardware/dcmi/library.py; tests/unit/dcmi/test_struct_layout.py compares them.
 */
#ifndef NPU_DRA_DCMI_STUB_H
#define NPU_DRA_DCMI_STUB_H

#define STUB_CHIP_NAME_LEN 32
#define STUB_OK 0
#define STUB_ERR_PARAMETER (-8001)
#define STUB_ERR_INTERNAL (-8005)
#define STUB_ERR_NOT_READY (-8012)
#define STUB_ERR_NOT_SUPPORTED (-8255)
#define STUB_SUBSCRIBE_ALL (-1)
#define STUB_MAIN_CMD_VDEV_MNG 52
#define STUB_VMNG_SUB_CMD_GET_VDEV_RESOURCE 0
#define STUB_VMNG_SUB_CMD_GET_TOTAL_RESOURCE 1
#define STUB_MAIN_CMD_CHIP_INF 12
#define STUB_CINF_SUB_CMD_GET_SPOD_INFO 1
#define STUB_ROCE_PORT 1
#define STUB_TEMPLATE_NAME_LEN 32
#define STUB_VDEV_RES_NAME_LEN 16
#define STUB_VDEV_FOR_RESERVE 32
#define STUB_VDEV_SIZE 20
#define STUB_SOC_SPLIT_MAX 32
#define STUB_MAX_EVENT_NAME_LENGTH 256
#define STUB_MAX_EVENT_DATA_LENGTH 32
#define STUB_MAX_EVENT_RESV_LENGTH 32

struct dcmi_chip_info {
    unsigned char chip_type[STUB_CHIP_NAME_LEN];
    unsigned char chip_name[STUB_CHIP_NAME_LEN];
    unsigned char chip_ver[STUB_CHIP_NAME_LEN];
    unsigned int aicore_cnt;
};

struct dcmi_pcie_info_all {
    unsigned int venderid;
    unsigned int subvenderid;
    unsigned int deviceid;
    unsigned int subdeviceid;
    int domain;
    unsigned int bdf_busid;
    unsigned int bdf_deviceid;
    unsigned int bdf_funcid;
    unsigned char reserve[32];
};

struct dcmi_hbm_info {
    unsigned long long memory_size; /* MB */
    unsigned int freq;
    unsigned long long memory_usage;
    int temp;
    unsigned int bandwith_util_rate;
};

struct dcmi_get_memory_info_stru {
    unsigned long long memory_size; /* MB */
    unsigned long long memory_available;
    unsigned int freq;
    unsigned long hugepagesize;
    unsigned long hugepages_total;
    unsigned long hugepages_free;
    unsigned int utiliza;
    unsigned char reserve[60];
};

struct dcmi_ip_addr {
    union {
        unsigned char ip6[16];
        unsigned char ip4[4];
    } u_addr;
    int ip_type; /* enum dcmi_ip_addr_type: 0 IPv4, 1 IPv6 */
};

struct dcmi_spod_info {
    unsigned int sdid;
    unsigned int scale_type;
    unsigned int super_pod_id;
    unsigned int server_id;
    unsigned int chassis_id;
    unsigned int super_pod_type;
    unsigned int reserve[6];
};

struct dcmi_board_info {
    unsigned int board_id;
    unsigned int pcb_id;
    unsigned int bom_id;
    unsigned int slot_id;
};

struct dcmi_base_resource {
    unsigned long long token;
    unsigned long long token_max;
    unsigned long long task_timeout;
    unsigned int vfg_id;
    unsigned char vip_mode;
    unsigned char reserved[STUB_VDEV_FOR_RESERVE - 1];
};

struct dcmi_computing_resource {
    float aic;
    float aiv;
    unsigned short dsa;
    unsigned short rtsq;
    unsigned short acsq;
    unsigned short cdqm;
    unsigned short c_core;
    unsigned short ffts;
    unsigned short sdma;
    unsigned short pcie_dma;
    unsigned long long memory_size; /* MB */
    unsigned int event_id;
    unsigned int notify_id;
    unsigned int stream_id;
    unsigned int model_id;
    unsigned short topic_schedule_aicpu;
    unsigned short host_ctrl_cpu;
    unsigned short host_aicpu;
    unsigned short device_aicpu;
    unsigned short topic_ctrl_cpu_slot;
    unsigned int vdev_aicore_utilization;
    unsigned long long vdev_memory_total;
    unsigned long long vdev_memory_free;
    unsigned char reserved[STUB_VDEV_FOR_RESERVE - STUB_VDEV_SIZE];
};

struct dcmi_media_resource {
    float jpegd;
    float jpege;
    float vpc;
    float vdec;
    float pngd;
    float venc;
    unsigned char reserved[STUB_VDEV_FOR_RESERVE];
};

struct dcmi_create_vdev_out {
    unsigned int vdev_id;
    unsigned int pcie_bus;
    unsigned int pcie_device;
    unsigned int pcie_func;
    unsigned int vfg_id;
    unsigned char reserved[STUB_VDEV_FOR_RESERVE];
};

struct dcmi_create_vdev_res_stru {
    unsigned int vdev_id;
    unsigned int vfg_id;
    char template_name[STUB_TEMPLATE_NAME_LEN];
    unsigned char reserved[64];
};

struct dcmi_vdev_query_info {
    char name[STUB_VDEV_RES_NAME_LEN];
    unsigned int status;
    unsigned int is_container_used;
    unsigned int vfid;
    unsigned int vfg_id;
    unsigned long long container_id;
    struct dcmi_base_resource base;
    struct dcmi_computing_resource computing;
    struct dcmi_media_resource media;
};

struct dcmi_vdev_query_stru {
    unsigned int vdev_id;
    struct dcmi_vdev_query_info query_info;
};

struct dcmi_soc_total_resource {
    unsigned int vdev_num;
    unsigned int vdev_id[STUB_SOC_SPLIT_MAX];
    unsigned int vfg_num;
    unsigned int vfg_bitmap;
    struct dcmi_base_resource base;
    struct dcmi_computing_resource computing;
    struct dcmi_media_resource media;
};

struct dcmi_dms_fault_event {
    unsigned int event_id;       /* the fault code */
    unsigned short deviceid;     /* the chip's logic id */
    unsigned char node_type;
    unsigned char node_id;
    unsigned char sub_node_type;
    unsigned char sub_node_id;
    unsigned char severity;      /* 0 warning, 1 minor, 2 major, 3 critical */
    unsigned char assertion;     /* 0 recovered, 1 raised, 2 one-off */
    int event_serial_num;
    int notify_serial_num;
    unsigned long long alarm_raised_time;
    char event_name[STUB_MAX_EVENT_NAME_LENGTH];
    char additional_info[STUB_MAX_EVENT_DATA_LENGTH];
    unsigned char resv[STUB_MAX_EVENT_RESV_LENGTH];
};

struct dcmi_event {
    int type; /* enum dcmi_event_type: DCMI_DMS_FAULT_EVENT = 0 */
    union {
        struct dcmi_dms_fault_event dms_event;
    } event_t;
};

struct dcmi_event_filter {
    unsigned long long filter_flag;
    unsigned int event_id;
    unsigned char severity;
    unsigned char node_type;
    unsigned char resv[STUB_MAX_EVENT_RESV_LENGTH];
};

typedef void (*dcmi_fault_handler)(struct dcmi_event *fault_event);

int dcmi_init(void);
int dcmi_get_card_list(int *card_num, int *card_list, int list_len);
int dcmi_get_device_num_in_card(int card_id, int *device_num);
int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id);
int dcmi_get_device_phyid_from_logicid(unsigned int logicid, unsigned int *phyid);
int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info *chip_info);
int dcmi_get_device_pcie_info_v2(int card_id, int device_id, struct dcmi_pcie_info_all *pcie_info);
int dcmi_get_device_health(int card_id, int device_id, unsigned int *health);
int dcmi_get_device_errorcode_v2(int card_id, int device_id, int *error_count,
                                 unsigned int *error_code_list, unsigned int list_len);
int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info);
int dcmi_get_device_memory_info_v3(int card_id, int device_id,
                                   struct dcmi_get_memory_info_stru *memory_info);
int dcmi_get_device_board_info(int card_id, int device_id, struct dcmi_board_info *board_info);
int dcmi_get_affinity_cpu_info_by_device_id(int card_id, int device_id, char *affinity_cpu,
                                            int *length);

int dcmi_create_vdevice(int card_id, int device_id, struct dcmi_create_vdev_res_stru *vdev,
                        struct dcmi_create_vdev_out *out);
int dcmi_set_destroy_vdevice(int card_id, int device_id, unsigned int vdevid);
int dcmi_get_device_info(int card_id, int device_id, int main_cmd, unsigned int sub_cmd,
                         void *buf, unsigned int *size);
int dcmi_subscribe_fault_event(int card_id, int device_id, struct dcmi_event_filter filter,
                               dcmi_fault_handler handler);

int dcmi_get_device_ip(int card_id, int device_id, int input_type, int port_id,
                       struct dcmi_ip_addr *ip, struct dcmi_ip_addr *mask);

#endif
