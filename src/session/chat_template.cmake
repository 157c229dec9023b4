target_sources(peak PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/chat_template.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chat_template_detect.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chat_template_format.cpp
)
