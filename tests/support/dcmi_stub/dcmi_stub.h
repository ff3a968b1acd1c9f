/* The project's own declarations of the DCMI structures and functions the stand-in serves.
 *
 * Written from Huawei's public header in github.com/Ascend/mind-cluster,
 * component/ascend-common/devmanager/dcmi/dcmi_interface_api.h (struct layouts, prototypes),
 * return codes from component/ascend-common/devmanager/dcmi/common.go (dcmiErrMap) and limits
 * from component/ascend-common/devmanager/common/constants.go (MaxErrorCodeCount = 128,
 * HiAIMaxCardNum = 64) and dcmi/constants.go (TopoInfoMaxLen = 32). Not a copy of the header:
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

struct dcmi_board_info {
    unsigned int board_id;
    unsigned int pcb_id;
    unsigned int bom_id;
    unsigned int slot_id;
};

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

#endif
