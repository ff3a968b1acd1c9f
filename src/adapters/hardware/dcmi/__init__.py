"""The DCMI backend: Huawei's device management library (libdcmi.so) read through ctypes."""
