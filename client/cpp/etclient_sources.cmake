# libetclient's sources, for client/cpp/CMakeLists.txt and the Python extension's build.
set(ETCLIENT_SOURCES
  "${CMAKE_CURRENT_LIST_DIR}/src/arena.cc"
  "${CMAKE_CURRENT_LIST_DIR}/src/client.cc"
  "${CMAKE_CURRENT_LIST_DIR}/src/connection.cc"
  "${CMAKE_CURRENT_LIST_DIR}/src/fast_path.cc"
  "${CMAKE_CURRENT_LIST_DIR}/src/realtime.cc"
  "${CMAKE_CURRENT_LIST_DIR}/src/autostart.cc"
  "${CMAKE_CURRENT_LIST_DIR}/src/wire.cc")
