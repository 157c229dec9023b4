target_sources(peak PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kv_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/context.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sparse_sampler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_chat_template.cpp
  ${CMAKE_CURRENT_LIST_DIR}/summarizer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chat_session.cpp
  ${CMAKE_CURRENT_LIST_DIR}/session_file.cpp
)
