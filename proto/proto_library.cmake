# The protocol libraries, included by proto/CMakeLists.txt (the project) and by
# client/python/CMakeLists.txt (the Python extension's own build):
#   et_proto  the generated gRPC/protobuf code of et_serverd.proto
#   et_wire   the descriptor socket's client side and the content hash
set(_et_proto_dir "${CMAKE_CURRENT_LIST_DIR}")
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(ET_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

set(_proto_out "${CMAKE_BINARY_DIR}/generated/proto")

# et_protoc(FILE): generates FILE's protobuf and gRPC C++ code (FILE relative to this
# directory) into ${_proto_out}, as NAME.pb.{h,cc} and NAME.grpc.pb.{h,cc}.
function(et_protoc file)
  get_filename_component(name "${file}" NAME_WE)
  get_filename_component(dir "${_et_proto_dir}/${file}" DIRECTORY)
  add_custom_command(
    OUTPUT "${_proto_out}/${name}.pb.cc" "${_proto_out}/${name}.pb.h"
           "${_proto_out}/${name}.grpc.pb.cc" "${_proto_out}/${name}.grpc.pb.h"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${_proto_out}"
    COMMAND protobuf::protoc --proto_path "${dir}"
            --cpp_out "${_proto_out}" --grpc_out "${_proto_out}"
            --plugin=protoc-gen-grpc=${ET_GRPC_CPP_PLUGIN} "${_et_proto_dir}/${file}"
    DEPENDS "${_et_proto_dir}/${file}"
    COMMENT "protoc: proto/${file}")
endfunction()

et_protoc(et_serverd.proto)
# The standard health service's client side (et-serverd --check).
et_protoc(grpc_health_v1.proto)

# Generated code: compiled without the project's -Werror (it is not ours to fix).
add_library(et_proto STATIC "${_proto_out}/et_serverd.pb.cc" "${_proto_out}/et_serverd.grpc.pb.cc")
target_include_directories(et_proto PUBLIC "${_proto_out}")
target_link_libraries(et_proto PUBLIC protobuf::libprotobuf gRPC::grpc++)
set_target_properties(et_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)

add_library(et_wire STATIC "${_et_proto_dir}/fd_client.cc" "${_et_proto_dir}/sha256.cc"
            "${_et_proto_dir}/socket_trust.cc" "${_et_proto_dir}/spawn_lock.cc")
target_include_directories(et_wire PUBLIC "${_et_proto_dir}/..")
set_target_properties(et_wire PROPERTIES POSITION_INDEPENDENT_CODE ON)
find_package(OpenSSL REQUIRED)  # libcrypto's SHA-256 (sha256.h)
target_link_libraries(et_wire PUBLIC OpenSSL::Crypto)
target_link_libraries(et_proto PUBLIC et_wire)

# et_kserve_proto: the KServe v2 / Triton gRPC protocol (proto/kserve/kserve_v2.proto),
# the daemon's second gRPC service (server/kserve/), and the health service's client
# side (proto/grpc_health_v1.proto): both daemon-only.
et_protoc(kserve/kserve_v2.proto)
add_library(et_kserve_proto STATIC EXCLUDE_FROM_ALL "${_proto_out}/kserve_v2.pb.cc"
            "${_proto_out}/kserve_v2.grpc.pb.cc" "${_proto_out}/grpc_health_v1.pb.cc"
            "${_proto_out}/grpc_health_v1.grpc.pb.cc")
target_include_directories(et_kserve_proto PUBLIC "${_proto_out}")
target_link_libraries(et_kserve_proto PUBLIC protobuf::libprotobuf gRPC::grpc++)
